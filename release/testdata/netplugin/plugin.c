/* A net plugin of the tests' own making for `nrtabi release new --binary`
 * and `nrtabi diff`: the three tables of spec net_plugin.toml in the public
 * headers' shapes (every member a pointer, as the spec types them), built
 * with -g so their layouts come from DWARF. Each PLANT_* define plants one
 * change a release made from it must record and a diff must report:
 *   PLANT_V5_SEED     ncclNet_v5_t of 24 members, the seed's slot count
 *   PLANT_NO_V6       no ncclNetPlugin_v6 (the bound table lost)
 *   PLANT_RENAME      ncclNet_v6_t's isend named isendTagged
 *   PLANT_VERSION     a version string where aws-ofi-nccl logs its own
 *   PLANT_NO_TABLES   no table at all (not a plugin libnccom can use)
 * The members point nowhere callable: release new reads, never loads. */
#include <stddef.h>

#ifdef PLANT_RENAME
#define ISEND isendTagged
#else
#define ISEND isend
#endif

#define COMMON_HEAD                                                                                \
	const char *name;                                                                          \
	void *init;

typedef struct {
	COMMON_HEAD
	void *fini;
	void *devices, *getProperties, *listen, *connect, *accept, *regMr, *regMrDmaBuf, *deregMr;
	void *ISEND, *irecv, *iflush, *test, *closeSend, *closeRecv, *closeListen;
	void *getMrKey, *iwrite, *iwriteInline, *iread;
} ncclNet_v6_t;

typedef struct {
	COMMON_HEAD
	void *devices, *getProperties, *listen, *connect, *accept, *regMr, *regMrDmaBuf, *deregMr;
	void *isend, *irecv, *iflush, *test, *closeSend, *closeRecv, *closeListen;
	void *getMrKey, *iwrite, *iwriteInline, *iread;
#ifdef PLANT_V5_SEED
	void *spare0, *spare1, *spare2;
#endif
} ncclNet_v5_t;

typedef struct {
	COMMON_HEAD
	void *devices, *getProperties, *listen, *connect, *accept, *regMr, *deregMr;
	void *isend, *irecv, *iflush, *test, *closeSend, *closeRecv, *closeListen;
} ncclNet_v4_t;

#define NAME "nrtabi-test-plugin"

#ifndef PLANT_NO_TABLES
#ifndef PLANT_NO_V6
__attribute__((visibility("default"))) ncclNet_v6_t ncclNetPlugin_v6 = {.name = NAME};
#endif
__attribute__((visibility("default"))) ncclNet_v5_t ncclNetPlugin_v5 = {.name = NAME};
__attribute__((visibility("default"))) ncclNet_v4_t ncclNetPlugin_v4 = {.name = NAME};
#else
__attribute__((visibility("default"))) int np_not_a_table;
int np_not_a_table = 1;
#endif

#ifdef PLANT_VERSION
__attribute__((visibility("default"))) const char *np_banner(void);
const char *np_banner(void) { return "NET/OFI Initializing aws-ofi-nccl 1.21.1-test"; }
#endif
