/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file. */
#ifndef NRTABI_OLDDROP_NRT_TYPES_H
#define NRTABI_OLDDROP_NRT_TYPES_H

#include <stdint.h>

typedef uint32_t nrt_addr_family_t;

typedef enum net_addr_mark {
	NET_TRANSFER = 0,
	NET_OP_COMPLETE = 1,
	EXEC_COMPLETE = 2,
} net_addr_mark_t;

#endif
