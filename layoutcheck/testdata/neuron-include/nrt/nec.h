#ifndef NRTABI_TEST_NEC_H
#define NRTABI_TEST_NEC_H

#include <stdbool.h>
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

/* planted: the spec's enc_histogram_config_t under another name, same layout */
typedef struct nec_histogram_cfg {
	bool enable;
	uint32_t bucket_count;
	uint64_t bucket_size;
	uint64_t warmup_size;
	uint64_t warmup_iterations;
	char output_path[128];
	uint64_t reserved;
} nec_histogram_cfg_t;

typedef struct enc_neuron_device_info {
	int nec_dev_id;
	int mla_idx;
	int nc_count; /* planted: inside a range the spec leaves opaque */
	int host_device_id;
	/* bytes this tree leaves undeclared (unnamed bit-fields emit no DWARF) */
	uint64_t : 64;
	uint64_t : 64;
	nec_pod_type_t pod_type;
	uint32_t : 32;
	uint32_t virtual_server_id;
	uint32_t : 32;
	nec_histogram_cfg_t histogram_config;
} enc_neuron_device_info_t;

#endif
