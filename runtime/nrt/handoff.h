/*
 * The C half of ncclInit, the one-time forward handoff (docs/sources.md#s000-2). It is C
 * because dlerror() is per thread and must be read right after the dlopen or
 * dlsym that set it, and because the recorded messages are the spec's printf
 * formats. runtime/nrt's Init runs it exactly once per process.
 */
#ifndef NRTABI_RUNTIME_HANDOFF_H
#define NRTABI_RUNTIME_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "nrtabi.h"

/* Where the handoff stopped. */
enum nrt_handoff_stage {
	NRT_HANDOFF_OK = 0,
	NRT_HANDOFF_DLOPEN = 1,       /* the library did not load */
	NRT_HANDOFF_NO_PROBE = 2,     /* it has no neuronGetVersionInfo */
	NRT_HANDOFF_INCOMPATIBLE = 3, /* its compatibility id is not the spec's */
	NRT_HANDOFF_MISSING = 4,      /* one of the other entry points is missing */
};

struct nrt_handoff_outcome {
	int stage;                   /* enum nrt_handoff_stage */
	int missing;                 /* dlsym index of the missing entry point, or -1 */
	int probed;                  /* the version probe ran */
	nec_version_info_t version;  /* what it reported */
	void *handle;                /* the libnccom handle, NULL if it did not load */
};

/* net_tables: the plugin table symbols (NULL-terminated) a net plugin must
 * export at least one of. */
NRT_STATUS nrt_handoff_run(const char *library, const char *net_library, const char *const *net_tables,
			   struct nrt_handoff_outcome *out);

/* The table and the sentinel as they are now. */
int nrt_handoff_valid_slots(void);
size_t nrt_handoff_sentinel(char *msg, size_t n);

/* The soft-loaded net plugin (libnccl_net_handle) and why it is absent. */
extern void *nrt_nccl_net_handle;
extern char nrt_nccl_net_error[512];

#endif
