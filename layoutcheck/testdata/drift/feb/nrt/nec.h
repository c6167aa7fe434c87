/* Written for nrtabi's drift acceptance test of layoutcheck (see ../../README).
 * Not a vendor file. State feb: drift from jan marked "drift:". */
#ifndef DRIFT_NEC_H
#define DRIFT_NEC_H

#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt.h"

typedef enum enc_mesh_event_type {
	EVT_NONE = 0,
	EVT_SEND = 1,
	EVT_RECV = 2,
	EVT_REDUCE = 3,
	EVT_REDUCE_SCATTER = 4, /* drift: added; the values after it shift */
	EVT_REDUCE_WRITE = 5,
	EVT_DONE = 6,
	EVT_FINISHED = 6, /* drift: an alias */
} enc_mesh_event_type_t;

typedef struct enc_mesh_event {
	enc_mesh_event_type_t type;
	uint32_t seq;
} enc_mesh_event_t;

typedef struct enc_ring {
	uint32_t ring_id;
	uint32_t num_ranks;
	uint64_t seq; /* drift: inserted */
	uint64_t send_buf;
	uint64_t recv_buf;
} enc_ring_t;

struct enc_ring_ctx;

typedef struct histogram_config { /* drift: renamed type, same layout */
	uint32_t buckets;
	uint32_t flags;
	uint64_t base;
} histogram_config_t;

typedef struct enc_comm {
	uint32_t id;
	uint32_t stream_id;
	enc_ring_t ring[2];
	uint64_t epoch;
} enc_comm_t;

typedef struct enc_glb_comm {
	uint32_t g_device_id;
	uint32_t pod_sz : 24; /* drift: a bitfield */
	uint32_t pod_flags : 8;
	struct enc_ring_ctx *local_rings; /* drift: was void * */
	enc_comm_t comm;
	enc_ring_t spare_ring;
	uint32_t vtpb_idx;
	uint32_t dev_count;
	histogram_config_t hist;
} enc_glb_comm_t;

typedef struct enc_msg {
	uint32_t kind;
	int32_t len_s; /* drift: replaces len */
	char payload[]; /* drift: was uint8_t[] */
} enc_msg_t;

int enc_glb_comm_init(enc_glb_comm_t *g, const nrt_instance_info_t *info);
int enc_msg_post(enc_glb_comm_t *g, enc_msg_t *m, enc_mesh_event_t *ev);

#endif
