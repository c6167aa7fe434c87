/*
 * libnrt's proxy driver loop (docs/sources.md#s000-3): one thread, named
 * "proxy-<tid>", calls the hot ncclNetworkProxyProgress once per iteration
 * (its trampoline carries no guard: the loop only starts once the forward
 * table is loaded) and consumes the completion edge libnccom raises with
 * nec_inc_semaphore on the driver's word. The loop is C, on a thread of its
 * own: the tick costs no cgo crossing, and renaming a thread Go might hand
 * to other goroutines (or the process's main thread) is not possible.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nrt_slots.h"
#include "proxy_driver.h"

/* The pause after an idle tick, in slices of at most 1 ms so that a stop
 * is seen within a slice whatever the pause (extension proxy-driver-cadence). */
static void idle(struct nrt_proxy_driver *d)
{
	uint64_t left = d->idle_ns;
	while (left > 0 && !__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		uint64_t slice = left < 1000000 ? left : 1000000;
		struct timespec ts = {0, (long)slice};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		left -= slice;
	}
}

static void *loop(void *arg)
{
	struct nrt_proxy_driver *d = arg;
	char name[16];
	d->tid = (long)syscall(SYS_gettid);
	snprintf(name, sizeof name, "proxy-%ld", d->tid);
	int ok = prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0) == 0;
	__atomic_store_n(&d->named, ok ? 1 : -1, __ATOMIC_RELEASE);
	if (!ok)
		return NULL;
	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		bool progressed = false, failed = false;
		NRT_STATUS rc = ncclNetworkProxyProgress(d->comm, d->stream, d->proxy, &progressed, &failed);
		__atomic_add_fetch(&d->ticks, 1, __ATOMIC_RELEASE);
		uint32_t v = __atomic_load_n(&d->sem, __ATOMIC_ACQUIRE);
		if (v != __atomic_load_n(&d->last_sem, __ATOMIC_RELAXED)) {
			__atomic_store_n(&d->last_sem, v, __ATOMIC_RELEASE);
			__atomic_add_fetch(&d->edges, 1, __ATOMIC_RELEASE);
		}
		if (rc != NRT_SUCCESS || failed) {
			d->rc = (uint32_t)rc;
			d->failed = failed;
			__atomic_store_n(&d->ended, 1, __ATOMIC_RELEASE);
			return NULL;
		}
		if (progressed)
			__atomic_add_fetch(&d->progressed, 1, __ATOMIC_RELEASE);
		else
			idle(d);
	}
	return NULL;
}

int nrt_proxy_start(struct nrt_proxy_driver *d)
{
	int rc = pthread_create(&d->thread, NULL, loop, d);
	if (rc != 0)
		return rc;
	while (__atomic_load_n(&d->named, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	if (d->named < 0) {
		pthread_join(d->thread, NULL);
		return EPERM;
	}
	return 0;
}

void nrt_proxy_join(struct nrt_proxy_driver *d)
{
	pthread_join(d->thread, NULL);
}
