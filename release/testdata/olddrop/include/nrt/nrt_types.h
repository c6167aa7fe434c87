/* Written for nrtabi's older-drop acceptance test (see ../../README).
 * Not a vendor file. */
#ifndef NRTABI_OLDDROP_NRT_TYPES_H
#define NRTABI_OLDDROP_NRT_TYPES_H

#include <stdint.h>

typedef uint32_t nrt_addr_family_t;

#endif
