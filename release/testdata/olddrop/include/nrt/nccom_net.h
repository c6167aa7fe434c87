/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file. planted: uses nrt_addr_family_t, which nrt_types.h
 * defines, without including it (the code that includes this header
 * includes nrt_types.h first). */
#ifndef NRTABI_OLDDROP_NCCOM_NET_H
#define NRTABI_OLDDROP_NCCOM_NET_H

#include <stdbool.h>
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

typedef enum net_addr_mark {
	NET_TRANSFER = 0,
	NET_OP_COMPLETE = 1,
	EXEC_COMPLETE = 2,
} net_addr_mark_t;

/* planted: boundary pointees that differ from the parent's, which
 * neuronStartNetworkProxy takes by pointer: this older net_ops_info has no
 * add_to_histogram and carries the peer and the algorithm hierarchy after
 * enc_channel (88 -> 96 bytes); net_src_addr has no proxy_histogram_tag
 * and ends in the peer's address family (56 -> 48 bytes) */
typedef struct net_ops_info {
	uint16_t sema_shift_offset;
	bool early_send_completion;
	bool early_recv_posting;
	volatile uint32_t *inc_send_handshake;
	volatile uint32_t *inc_send_complete;
	volatile uint32_t *inc_recv_handshake;
	volatile uint32_t *inc_recv_complete;
	uint32_t tx_entry_cnt;
	uint32_t rx_entry_cnt;
	uint32_t net_idx_loop_size;
	uint32_t initial_send_credits;
	uint32_t ending_recv_credits;
	size_t data_type_sz;
	bool is_dynamic_send_recv_sz;
	bool is_recv_sz_known_by_dst;
	bool variable_peer;
	int peer;
	void *enc_channel;
	struct enc_alg_hier *hier;
} net_ops_info_t;

typedef struct net_src_addr {
	uint32_t net_op_idx;
	int complete;
	uint64_t dev_addr;
	void *host_addr;
	void *nccl_mhandle;
	uint32_t size;
	net_addr_mark_t mark;
	int dst_rank;
	nrt_addr_family_t family;
} net_src_addr_t;

#endif
