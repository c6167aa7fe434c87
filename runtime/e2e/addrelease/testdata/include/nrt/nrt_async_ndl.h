/* Written for nrtabi's add-a-release acceptance test (see ../../README).
 * Not a vendor file. planted: includes a driver header this tree does not
 * ship, so it does not compile; it declares no struct the spec describes. */
#ifndef NRTABI_ACCEPT_NRT_ASYNC_NDL_H
#define NRTABI_ACCEPT_NRT_ASYNC_NDL_H

#include <stdint.h>
#include <ndl/neuron_driver_shared.h>

typedef struct nrt_async_ndl_window {
	uint64_t base;
	uint64_t size;
} nrt_async_ndl_window_t;

#endif
