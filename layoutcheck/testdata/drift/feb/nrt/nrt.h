/* Written for nrtabi's drift acceptance test of layoutcheck (see ../../README).
 * Not a vendor file. State feb: drift from jan marked "drift:". */
#ifndef DRIFT_NRT_H
#define DRIFT_NRT_H

#include <stdint.h>

typedef struct nrt_instance_info {
	uint32_t family;
	union { /* drift: wrapped, the member kept */
		uint32_t size;
		uint32_t bytes;
	};
	char device_revision[8]; /* drift: renamed */
	uint16_t vnc_count; /* drift: resized */
	uint32_t flags;
} nrt_instance_info_t;

int nrt_get_instance_info(nrt_instance_info_t *info, uint64_t len);

#endif
