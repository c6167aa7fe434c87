#include <stdint.h>
typedef struct nrt_version {
	uint64_t rt_major, rt_minor, rt_patch, rt_maintenance;
	char rt_detail[128];
	char git_hash[64];
} nrt_version_t;
enum color { RED, GREEN = 5 };
struct inner { unsigned a : 3, b : 5; union { int i; float f; } u; enum color c; };
struct outer { struct inner in[2]; struct outer *next; const char *name; void (*fn)(int); char flex[]; };
nrt_version_t hostile_v;
struct outer *hostile_o;
