/* Written for nrtabi's add-a-release acceptance test (see ../../README).
 * Not a vendor file. */
#ifndef NRTABI_ACCEPT_NRT_VERSION_H
#define NRTABI_ACCEPT_NRT_VERSION_H

#include <stdint.h>

#define RT_VERSION_DETAIL_LEN 128
#define GIT_HASH_LEN 64

typedef struct nrt_version {
	uint64_t rt_major;
	uint64_t rt_minor;
	uint64_t rt_patch;
	uint64_t rt_maintenance;
	char rt_detail[RT_VERSION_DETAIL_LEN];
	char git_hash[GIT_HASH_LEN];
} nrt_version_t;

#endif
