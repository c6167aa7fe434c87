/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file. planted: uses nrt_addr_family_t, which nrt_types.h
 * defines, without including it (the code that includes this header
 * includes nrt_types.h first). */
#ifndef NRTABI_OLDDROP_NCCOM_NET_H
#define NRTABI_OLDDROP_NCCOM_NET_H

#include <stddef.h>
#include <stdint.h>

/* planted: anonymous members (an unnamed union, a member of an unnamed
 * struct type) */
struct enc_alg_hier {
	uint32_t kind;
	union {
		struct {
			uint32_t ranks;
			uint32_t stride;
		} intra;
		struct {
			uint64_t nodes;
		} inter;
	};
	struct {
		uint32_t depth;
		uint32_t chunks;
	} pipeline;
};

/* planted: the parent holds these as opaque types; a forward signature
 * passes them by pointer */
typedef struct net_ops_info {
	uint32_t op;
	uint32_t flags;
	void *buf;
	size_t size;
	int peer;
	struct enc_alg_hier *hier;
	uint64_t tag;
} net_ops_info_t;

typedef struct net_src_addr {
	nrt_addr_family_t family;
	uint32_t port;
	uint8_t addr[16];
	uint64_t ifindex;
	char name[24];
} net_src_addr_t;

#endif
