/* Written for nrtabi's add-a-release acceptance test (see ../../README).
 * Not a vendor file. */
#ifndef NRTABI_ACCEPT_NRT_H
#define NRTABI_ACCEPT_NRT_H

#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_version.h"

typedef struct nrt_instance_info {
	uint32_t family;
	uint32_t size;
	char arch_name[16];
	char device_revision[8];
} nrt_instance_info_t;

#endif
