/*
 * nrtabi's own entry points in its libnrt.so.1, exported @@NRT_2.0.0 next to
 * the 20 reverse callbacks (whose prototypes are in the generated nrtabi.h).
 * They are what a host program needs to drive the runtime boundary; the
 * shipped libnrt has no such functions. Statuses are NRT_STATUS values.
 */
#ifndef NRTABI_RUNTIME_H
#define NRTABI_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name of the boundary release this library was built for ("2.31.24"),
 * compiled in from its build tag (docs/runtime-boundary.md#release-identity):
 * a host checks it against the release it asked for. The library also
 * exports the same string as the data symbol nrtabi_release_name, for
 * checkers that read the file without loading it; C code must not name it:
 * a copy relocation would fix its size at link time, and another release's
 * library would then be read truncated. */
const char *nrtabi_release(void);

/* Once per process: load the simulated topology (NULL or "": the embedded
 * default) and run the forward handoff with libnccom (NULL or "": the spec's
 * "libnccom.so" through the normal search path). Every caller, concurrent or
 * later, gets the first call's status. */
uint32_t nrtabi_init(const char *topology, const char *libnccom);

/* The forward table now: returns the number of valid slots, sets *slots to
 * the table's size, *armed to whether the init-error sentinel is armed, and
 * copies its message to msg (at most n bytes with the NUL). Any pointer may
 * be NULL. n above 2^30 is refused: -1, nothing written. */
int nrtabi_ccom_state(int *slots, int *armed, char *msg, size_t n);

/* Call forward entry point index (dlsym order) through the runtime's typed
 * Go API with fixed arguments (nil handles: test doubles only), describing
 * the answer in out as "<neuron* name>: ok <details>" or
 * "<neuron* name>: <status name>" (at most n bytes with the NUL). Returns the
 * call's status; NRT_INVALID, nothing called, for n above 2^30. */
uint32_t nrtabi_ccom_call(int index, char *out, size_t n);

/* One rank of a world through the boundary (after nrtabi_init): the loaded
 * libnccom's neuronInitGlobalComm over TCP through root_id (rank 0 serves
 * the root there), then the per-NC bootstrap of one replica group spanning
 * the world over the ncclBootstrapSend/Recv trampolines; reordered != 0
 * posts the reordered program. Writes the rank's report line
 * ("rank=.. nranks=.. prev=.. next=.. cluster_id=.. unique_id=.. verdict=..")
 * to line and returns the status. */
uint32_t nrtabi_bootstrap_world(int rank, int nranks, const char *root_id, int reordered, char *line, size_t n);

/* The proxy-<tid> driver loop (after nrtabi_init) over the loaded libnccom
 * for stream 0, proxy 0 of a NULL comm: at most ms milliseconds (capped at a
 * minute), or until a tick fails. Writes "thread=proxy-<tid> ticks=N
 * progressed=N status=S" to line and returns S, the status that ended the
 * loop (NRT_SUCCESS when the time ran out). */
uint32_t nrtabi_proxy_run(uint32_t ms, char *line, size_t n);

/* The nccl* trampolines, for a host that calls libnccom the way libnrt's own
 * layers do, guard included (docs/runtime-boundary.md#the-trampoline-table):
 * out is a struct nrt_nccl_slots (nrt_slots.h) and n its size; each member is
 * filled with the trampoline of its slot (neuronGetVersionInfo, the probe the
 * handoff ran, with NULL). Returns NRT_SUCCESS, or NRT_INVALID with nothing
 * written for a NULL out or any other n. */
uint32_t nrtabi_trampolines(void *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
