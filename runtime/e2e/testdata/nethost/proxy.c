/*
 * The network proxy: one op per peer in one list, its send FIFO and receive
 * FIFO (NET_TRANSFER entries through the mesh connectors, NET_OP_COMPLETE
 * per op, EXEC_COMPLETE last), progressed tick by tick through the hot
 * trampoline until the last entries are complete, then stopped; each op's
 * completion semaphores and every received byte checked.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrtabi.h"
#include "nethost.h"

/* Proxy messages carry rounds from here on, apart from the direct ones. */
enum { PROXY_ROUND = 1 << 14 };

struct region {
	unsigned char *sbuf, *rbuf;
	void *smh, *rmh;
	volatile uint32_t sem_send, sem_recv;
};

void run_proxy(struct world *w)
{
	int e = w->proxy_entries, n = w->nranks, me = w->rank;
	if (e == 0)
		return;
	NRT_STATUS rc = w->t.neuronExpandConnectivity(w->comm, ENC_CONNECTIVITY_MESH);
	if (rc != NRT_SUCCESS)
		fail(w, "neuronExpandConnectivity", rc, -1, "the mesh connectors were not built");
	struct region *rg = calloc((size_t)n, sizeof *rg);
	net_ops_info_t *ops = calloc((size_t)n, sizeof *ops);
	int n_fifo = (n - 1) * (e + 1) + 1;
	net_src_addr_t *src = calloc((size_t)n_fifo, sizeof *src);
	net_dest_addr_t *dst = calloc((size_t)n_fifo, sizeof *dst);
	if (rg == NULL || ops == NULL || src == NULL || dst == NULL)
		fail(w, "calloc", 0, -1, "out of memory");
	size_t bytes = (size_t)e * w->chunk;
	int s = 0, d = 0, n_ops = 0;
	for (int p = 0; p < n; p++) {
		if (p == me)
			continue;
		void *conn = NULL;
		if ((rc = w->t.neuronGetNetConnector(w->comm, ENC_PATTERN_MESH, p, true, &conn)) != NRT_SUCCESS || conn == NULL)
			fail(w, "neuronGetNetConnector", rc, p, "no send connector");
		if ((rc = w->t.neuronGetNetConnector(w->comm, ENC_PATTERN_MESH, p, false, &conn)) != NRT_SUCCESS || conn == NULL)
			fail(w, "neuronGetNetConnector", rc, p, "no receive connector");
		struct region *r = &rg[p];
		if (posix_memalign((void **)&r->sbuf, 4096, bytes) != 0 || posix_memalign((void **)&r->rbuf, 4096, bytes) != 0)
			fail(w, "posix_memalign", 0, p, "out of memory");
		memset(r->rbuf, 0, bytes);
		if ((rc = w->t.neuronNetRegMr(w->comm, ENC_PATTERN_MESH, p, true, NET_SEND_COMM, r->sbuf, bytes, NCCL_PTR_HOST, &r->smh)) != NRT_SUCCESS)
			fail(w, "neuronNetRegMr", rc, p, "registering the send region failed");
		if ((rc = w->t.neuronNetRegMr(w->comm, ENC_PATTERN_MESH, p, false, NET_RECV_COMM, r->rbuf, bytes, NCCL_PTR_HOST, &r->rmh)) != NRT_SUCCESS)
			fail(w, "neuronNetRegMr", rc, p, "registering the receive region failed");
		int op = n_ops++;
		ops[op].inc_send_complete = &r->sem_send;
		ops[op].inc_recv_complete = &r->sem_recv;
		ops[op].tx_entry_cnt = ops[op].rx_entry_cnt = (uint32_t)e;
		ops[op].data_type_sz = 1;
		for (int i = 0; i < e; i++) {
			unsigned char *sp = r->sbuf + (size_t)i * w->chunk;
			fill(sp, w->chunk, me, p, PROXY_ROUND + i);
			src[s++] = (net_src_addr_t){.net_op_idx = (uint32_t)op, .host_addr = sp, .nccl_mhandle = r->smh,
						    .size = (uint32_t)w->chunk, .mark = NET_TRANSFER, .dst_rank = p};
			dst[d++] = (net_dest_addr_t){.net_op_idx = (uint32_t)op, .host_addr = r->rbuf + (size_t)i * w->chunk,
						     .nccl_mhandle = r->rmh, .size = (uint32_t)w->chunk, .mark = NET_TRANSFER, .src_rank = p};
		}
		src[s++] = (net_src_addr_t){.net_op_idx = (uint32_t)op, .mark = NET_OP_COMPLETE, .dst_rank = p};
		dst[d++] = (net_dest_addr_t){.net_op_idx = (uint32_t)op, .mark = NET_OP_COMPLETE, .src_rank = p};
	}
	src[s++] = (net_src_addr_t){.mark = EXEC_COMPLETE, .dst_rank = -1};
	dst[d++] = (net_dest_addr_t){.mark = EXEC_COMPLETE, .src_rank = -1};
	if ((rc = w->t.neuronStartNetworkProxy(w->comm, 0, 0, ops, n_ops, src, s, dst, d)) != NRT_SUCCESS)
		fail(w, "neuronStartNetworkProxy", rc, -1, "the op list was refused");
	uint64_t ticks = 0;
	while (!src[s - 1].complete || !dst[d - 1].complete) {
		bool progressed = false, failed = false;
		rc = w->t.neuronNetworkProxyProgress(w->comm, 0, 0, &progressed, &failed);
		ticks++;
		if (rc != NRT_SUCCESS || failed)
			fail(w, "neuronNetworkProxyProgress", rc, -1, "the proxy failed");
		if (past(w))
			fail(w, "neuronNetworkProxyProgress", NRT_TIMEOUT, -1, "the op list was not done within the deadline");
		if (!progressed)
			sched_yield();
	}
	if ((rc = w->t.neuronStopNetworkProxy(w->comm, 0)) != NRT_SUCCESS)
		fail(w, "neuronStopNetworkProxy", rc, -1, "stop failed");
	for (int p = 0; p < n; p++) {
		if (p == me)
			continue;
		struct region *r = &rg[p];
		if (r->sem_send != 1 || r->sem_recv != 1)
			fail(w, "nec_inc_semaphore", (int)r->sem_send, p, "an op's completion semaphores were not set");
		for (int i = 0; i < e; i++) {
			long bad = mismatch(r->rbuf + (size_t)i * w->chunk, w->chunk, p, me, PROXY_ROUND + i);
			if (bad >= 0) {
				char what[128];
				snprintf(what, sizeof what, "proxy entry %d: byte %ld differs", i, bad);
				fail(w, "neuronNetworkProxyProgress", 0, p, what);
			}
			w->checked += w->chunk;
		}
		w->proxy_sent += bytes;
		w->proxy_received += bytes;
		if ((rc = w->t.neuronNetDeregMr(w->comm, ENC_PATTERN_MESH, p, true, NET_SEND_COMM, r->smh)) != NRT_SUCCESS ||
		    (rc = w->t.neuronNetDeregMr(w->comm, ENC_PATTERN_MESH, p, false, NET_RECV_COMM, r->rmh)) != NRT_SUCCESS)
			fail(w, "neuronNetDeregMr", rc, p, "deregistration failed");
		free(r->sbuf);
		free(r->rbuf);
	}
	fprintf(stderr, "nethost: rank %d: proxy list of %d ops done in %llu ticks\n", me, n_ops, (unsigned long long)ticks);
	free(ops), free(src), free(dst), free(rg);
}
