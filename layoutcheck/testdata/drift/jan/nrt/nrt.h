/* Written for nrtabi's drift acceptance test of layoutcheck (see ../../README).
 * Not a vendor file. State jan. */
#ifndef DRIFT_NRT_H
#define DRIFT_NRT_H

#include <stdint.h>

typedef struct nrt_instance_info {
	uint32_t family;
	uint32_t size;
	char revision[8];
	uint32_t vnc_count;
	uint32_t flags;
} nrt_instance_info_t;

int nrt_get_instance_info(nrt_instance_info_t *info, uint64_t len);

#endif
