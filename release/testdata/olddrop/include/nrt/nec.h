/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file: the layout style of a runtime's public nec.h, older
 * than spec 2.31.24, each difference marked "planted". */
#ifndef NRTABI_OLDDROP_NEC_H
#define NRTABI_OLDDROP_NEC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt.h"

typedef struct nec_version_info {
	uint64_t major;
	uint64_t minor;
	uint64_t patch;
	uint64_t maintenance;
	char git_hash[16];
	uint64_t compatibility_version;
	uint8_t future_fields[];
} nec_version_info_t;

typedef enum nec_pod_type {
	NEC_POD_TYPE_NONE = 0,
	NEC_POD_TYPE_P2P = 1,
	NEC_POD_TYPE_SWITCH = 2,
	NEC_POD_TYPE_INVALID = 3,
} nec_pod_type_t;

/* planted: the parent holds enc_host_mem_t as an opaque type */
typedef struct enc_host_mem {
	void *va;
	size_t size;
	uint32_t flags;
} enc_host_mem_t;

struct bp_barrier;

/* planted: no context_id (80 bytes, the parent's is 88) */
typedef struct enc_nccl_comm_node {
	void *nccl_comm;
	char *key;
	size_t key_sz;
	bool disable_graph;
	bool global_nccl_comm_node;
	int refcnt;
	uint32_t stream_id;
	uint32_t num_local_participants;
	uint32_t num_local_leaders;
	uint32_t my_local_leader;
	uint32_t *local_participants;
	uint32_t *local_leaders;
	struct bp_barrier *local_barrier;
	bool intra_pod_interface;
} enc_nccl_comm_node_t;

struct enc_comm {
	uint8_t reserved_0[80];
	int id;
	uint32_t stream_id;
	uint8_t reserved_88[561816];
};

struct enc_glb_comm {
	uint32_t g_device_id;
	uint32_t g_device_cnt;
	uint32_t vtpb_idx;
	int nec_dev_id;
	int mla_idx;
	int host_device_id;
	int routing_id;
	uint32_t virtual_server_id;
	nec_pod_type_t pod_type;
	uint32_t pod_node_id;
	uint32_t pod_sz;
	uint64_t reservation_id;
	const char *root_comm_id;
	bool check_sigs;
	uint32_t *rank_nodes;
	uint32_t *local_ranks;
	enc_nccl_comm_node_t nccl_comm_node; /* 8 bytes shorter: everything after moves by -8 */
	void *local_rings;
	void *local_peer_handles;
	uint32_t *inc_recv_sem_values_buffer;
	size_t inc_recv_sem_values_buffer_size;
	struct enc_comm comm;
	void *inter_rdh_devmem_res[4];
	void *intra_rdh_devmem_res[4];
	void *mesh_devmem_res_per_rg[96];
	uint8_t reserved_562936[1408];
	pthread_mutex_t gcomm_setup_mtx;
	void *proxy_queue;
	void *device_barrier_table;
};

#endif
