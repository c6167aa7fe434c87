/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file. planted: uses net_addr_mark_t, which nrt_types.h
 * defines, without including it (the code that includes this header
 * includes nrt_types.h first). */
#ifndef NRTABI_OLDDROP_NCCOM_NET_H
#define NRTABI_OLDDROP_NCCOM_NET_H

#include <stddef.h>
#include <stdint.h>

/* planted: anonymous members (an unnamed union, a member of an unnamed
 * struct type) */
struct enc_alg_hier {
	uint64_t kind;
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

/* planted: boundary pointees that changed. neuronStartNetworkProxy takes
 * them by pointer; the parent describes their later shape. This drop's
 * net_src_addr has no proxy_histogram_tag (48 bytes, dst_rank at 40), and
 * its net_ops_info holds a struct enc_alg_hier pointer where later drops
 * hold the enc_channel pointer (enc_alg_hier is reached through it). Uses
 * net_addr_mark_t, which nrt_types.h defines, without including it. */
typedef struct net_src_addr {
	uint32_t net_op_idx;
	int complete;
	uint64_t dev_addr;
	void *host_addr;
	void *nccl_mhandle;
	uint32_t size;
	net_addr_mark_t mark;
	int dst_rank;
} net_src_addr_t;

typedef struct net_ops_info {
	uint16_t sema_shift_offset;
	_Bool early_send_completion;
	_Bool early_recv_posting;
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
	_Bool is_dynamic_send_recv_sz;
	_Bool is_recv_sz_known_by_dst;
	_Bool variable_peer;
	_Bool add_to_histogram;
	struct enc_alg_hier *hier;
} net_ops_info_t;

#endif
