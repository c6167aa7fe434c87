/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file. planted: uses uint64_t without <stdint.h>, as a
 * vendor header may (the prelude supplies it). */
#ifndef NRTABI_OLDDROP_NRT_VERSION_H
#define NRTABI_OLDDROP_NRT_VERSION_H

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
