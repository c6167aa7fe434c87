/*
 * Cost of one forward call, four ways, against the real forward-only libnccom
 * double (dlopen'd, slots filled in dlsym order):
 *
 *   a    raw indirect call through the slot            nrt_nccl_slots.neuronStopNetworkProxy(...)
 *   b    the guarded trampoline, as callers get it    ncclStopNetworkProxy(...)   (inline from nrt_slots.h)
 *   b_ool the same trampoline called out of line       (bench_ool.c, built with -fno-inline)
 *   a_hot raw indirect call through the hot slot       nrt_nccl_slots.neuronNetworkProxyProgress(...)
 *   c    the exempt hot path                           ncclNetworkProxyProgress(...)
 *   c_ool the hot path called out of line
 *
 * Each variant runs ROUNDS times, interleaved with the others, on one pinned
 * CPU; the fastest round is reported (the least disturbed by other load).
 *
 *   bench LIBNCCOM [ITERATIONS [ROUNDS]]
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nrtabi.h"
#include "nrt_slots.h"

/* Every loop is unrolled the same way, so the loop's own branch weighs less
 * than the call being measured and no variant depends on where its one-call
 * loop happens to land. */
#define UNROLL _Pragma("GCC unroll 8")

void nrt_nccl_log(int level, const char *fn, const char *fmt, ...)
{
	(void)level;
	(void)fn;
	(void)fmt;
}

double bench_b_ool(long n);
double bench_c_ool(long n);

double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double bench_a(long n)
{
	double t = now();
	UNROLL for (long i = 0; i < n; i++)
		nrt_nccl_slots.neuronStopNetworkProxy(NULL, 0);
	return (now() - t) / (double)n;
}

static double bench_b(long n)
{
	double t = now();
	UNROLL for (long i = 0; i < n; i++)
		ncclStopNetworkProxy(NULL, 0);
	return (now() - t) / (double)n;
}

static double bench_a_hot(long n)
{
	bool p, f;
	double t = now();
	UNROLL for (long i = 0; i < n; i++)
		nrt_nccl_slots.neuronNetworkProxyProgress(NULL, 0, 0, &p, &f);
	return (now() - t) / (double)n;
}

static double bench_c(long n)
{
	bool p, f;
	double t = now();
	UNROLL for (long i = 0; i < n; i++)
		ncclNetworkProxyProgress(NULL, 0, 0, &p, &f);
	return (now() - t) / (double)n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench LIBNCCOM [ITERATIONS [ROUNDS]]\n");
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 20000000;
	int rounds = argc > 3 ? atoi(argv[3]) : 15;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (h == NULL) {
		fprintf(stderr, "bench: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < NRT_NCCL_SLOT_COUNT; i++) {
		void *p = dlsym(h, nrt_nccl_dlsym_order[i].name);
		if (p == NULL) {
			fprintf(stderr, "bench: %s has no %s\n", argv[1], nrt_nccl_dlsym_order[i].name);
			return 1;
		}
		*(void **)((char *)&nrt_nccl_slots + nrt_nccl_dlsym_order[i].offset) = p;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	sched_setaffinity(0, sizeof set, &set);

	struct {
		const char *name;
		double (*fn)(long);
		double best;
	} v[] = {
		{"a", bench_a, 1e30}, {"b", bench_b, 1e30}, {"b_ool", bench_b_ool, 1e30},
		{"a_hot", bench_a_hot, 1e30}, {"c", bench_c, 1e30}, {"c_ool", bench_c_ool, 1e30},
	};
	int nv = sizeof v / sizeof v[0];
	for (int i = 0; i < nv; i++)
		v[i].fn(n / 10); /* warm up */
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < nv; i++) {
			double ns = v[i].fn(n);
			if (ns < v[i].best)
				v[i].best = ns;
		}
	for (int i = 0; i < nv; i++)
		printf("%s %.4f\n", v[i].name, v[i].best);
	return 0;
}
