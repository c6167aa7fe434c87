/* The proxy-<tid> driver loop (docs/sources.md#s000-3); proxy_driver.go drives it. */
#ifndef NRT_PROXY_DRIVER_H
#define NRT_PROXY_DRIVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct nrt_proxy_driver {
	void *comm;
	uint32_t stream, proxy;
	uint64_t idle_ns;
	/* The word libnccom stores completions into through nec_inc_semaphore. */
	volatile uint32_t sem;
	/* Written by the loop, read by Go with atomic loads. */
	uint32_t last_sem;
	uint64_t ticks, progressed, edges;
	uint32_t rc;   /* the failing tick's status */
	int failed;    /* the failing tick said failed = true */
	int ended;     /* 1: a tick failed; the loop has returned */
	long tid;
	int named;     /* 0 until the thread is named: 1 named, -1 prctl failed */
	int stop;      /* set by Go: end after the current iteration */
	pthread_t thread;
};

/* Start the loop on a new thread; 0 once the thread has named itself. */
int nrt_proxy_start(struct nrt_proxy_driver *d);
/* Wait for the loop's thread to end (after stop was set, or a failed tick). */
void nrt_proxy_join(struct nrt_proxy_driver *d);

#endif
