/* The trampolines called out of line: this file is built with -fno-inline,
 * so each call is a call to nrt_slots.c's definition. */
#include "nrtabi.h"
#include "nrt_slots.h"

/* Every loop is unrolled the same way, so the loop's own branch weighs less
 * than the call being measured and no variant depends on where its one-call
 * loop happens to land. */
#define UNROLL _Pragma("GCC unroll 8")

double now(void);

double bench_b_ool(long n)
{
	double t = now();
	UNROLL for (long i = 0; i < n; i++)
		ncclStopNetworkProxy(NULL, 0);
	return (now() - t) / (double)n;
}

double bench_c_ool(long n)
{
	bool p, f;
	double t = now();
	UNROLL for (long i = 0; i < n; i++)
		ncclNetworkProxyProgress(NULL, 0, 0, &p, &f);
	return (now() - t) / (double)n;
}
