/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file. */
#ifndef NRTABI_OLDDROP_NRT_H
#define NRTABI_OLDDROP_NRT_H

#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_status.h"
#include "nrt/nrt_version.h"

/* planted: an older runtime's instance info, without arch_name and
 * device_revision (8 bytes, the parent's is 32) */
typedef struct nrt_instance_info {
	uint32_t family;
	uint32_t size;
} nrt_instance_info_t;

#endif
