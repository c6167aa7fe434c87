#ifndef NRTABI_TEST_NRT_H
#define NRTABI_TEST_NRT_H

#include <stdint.h>
#include <stddef.h>
#include "nrt/nrt_version.h"

typedef struct nrt_instance_info {
	int32_t family; /* planted: the spec has u32 */
	uint32_t size;
	char arch_name[16];
	char revision[8]; /* planted: the spec names it device_revision */
} nrt_instance_info_t;

#endif
