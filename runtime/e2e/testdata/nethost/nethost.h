/*
 * One rank of a net world through the whole stack (runtime/e2e
 * net_test.go): a C host linked against nrtabi's libnrt.so.1, which
 * dlopens the reference libnccom and soft-loads the net plugin
 * ($NRTABI_NET_PLUGIN); every libnccom call goes through libnrt's nccl*
 * trampolines (nrtabi_trampolines). After global comm init it moves data to
 * and from every peer through the net entry points (direct.c) and through
 * the network proxy (proxy.c), every byte checked.
 */
#ifndef NRTABI_E2E_NETHOST_H
#define NRTABI_E2E_NETHOST_H

#include <stddef.h>
#include <stdint.h>

#include "nrt_slots.h"

struct world {
	struct nrt_nccl_slots t; /* the trampolines */
	void *comm;              /* the global comm: bootstrap state and connectors */
	int rank, nranks;
	size_t chunk;            /* bytes of one message */
	int rounds;              /* messages per peer and direction through the entry points */
	int proxy_entries;       /* NET_TRANSFER entries per peer and direction of the proxy list */
	int vanish_round;        /* > 0: leave without a word after this many rounds (a fault) */
	double deadline;         /* CLOCK_MONOTONIC seconds: everything is done by then */
	uint64_t sent, received, checked, proxy_sent, proxy_received;
};

/* The failure line: names the entry point, the status and the peer; exits 1. */
_Noreturn void fail(const struct world *w, const char *entry, int status, int peer, const char *what);

double now(void);
int past(const struct world *w);

/* The bytes of message round of src -> dst: a pattern no other message has. */
void fill(unsigned char *p, size_t n, int src, int dst, int round);
/* The first byte of p that is not that message's, or -1. */
long mismatch(const unsigned char *p, size_t n, int src, int dst, int round);

void run_direct(struct world *w);
void run_proxy(struct world *w);

#endif
