/*
 * The net entry points one by one, as a collective's transport uses them:
 * listen, the handle to the peer over the comm's bootstrap, connect and
 * accept until the plugin hands out the comms, register, then rounds of
 * isend/irecv/test with every peer at once, each received byte checked,
 * and the close calls.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nrtabi.h"
#include "nethost.h"

enum { TODO, POSTED, DONE };

struct peer {
	unsigned char handle[NCCL_NET_HANDLE_MAXSIZE], theirs[NCCL_NET_HANDLE_MAXSIZE];
	void *listen, *send, *recv, *smh, *rmh, *sreq, *rreq;
	unsigned char *sbuf, *rbuf;
	int sstate, rstate;
};

static void *buffer(const struct world *w, size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, n) != 0)
		fail(w, "posix_memalign", 0, -1, "out of memory");
	return p;
}

/* The handles cross in rank order, so no two ranks wait on each other. */
static void exchange(struct world *w, struct peer *pc)
{
	for (int p = 0; p < w->nranks; p++) {
		if (p == w->rank)
			continue;
		for (int step = 0; step < 2; step++) {
			int sending = (step == 0) == (w->rank < p);
			NRT_STATUS rc = sending ? w->t.neuronBootstrapSend(w->comm, p, pc[p].handle, sizeof pc[p].handle, "nethost")
						: w->t.neuronBootstrapRecv(w->comm, p, pc[p].theirs, sizeof pc[p].theirs, "nethost");
			if (rc != NRT_SUCCESS)
				fail(w, sending ? "neuronBootstrapSend" : "neuronBootstrapRecv", rc, p, "the listen handle did not cross");
		}
	}
}

static void connect_all(struct world *w, struct peer *pc)
{
	for (int left = 1; left;) {
		left = 0;
		for (int p = 0; p < w->nranks; p++) {
			if (p == w->rank)
				continue;
			NRT_STATUS rc;
			if (pc[p].send == NULL && (rc = w->t.neuronNetConnect(0, pc[p].theirs, &pc[p].send)) != NRT_SUCCESS)
				fail(w, "neuronNetConnect", rc, p, "connect failed");
			if (pc[p].recv == NULL && (rc = w->t.neuronNetAccept(pc[p].listen, &pc[p].recv)) != NRT_SUCCESS)
				fail(w, "neuronNetAccept", rc, p, "accept failed");
			left |= pc[p].send == NULL || pc[p].recv == NULL;
		}
		if (left && past(w))
			fail(w, "neuronNetConnect", NRT_TIMEOUT, -1, "no connection within the deadline");
		if (left)
			sched_yield();
	}
}

/* One round: a message to and from every peer, in flight together. */
static void round_trip(struct world *w, struct peer *pc, int k)
{
	for (int p = 0; p < w->nranks; p++)
		if (p != w->rank) {
			fill(pc[p].sbuf, w->chunk, w->rank, p, k);
			pc[p].sstate = pc[p].rstate = TODO;
		}
	for (int left = 1; left;) {
		left = 0;
		for (int p = 0; p < w->nranks; p++) {
			if (p == w->rank)
				continue;
			struct peer *c = &pc[p];
			NRT_STATUS rc;
			int done = 0, size = 0;
			if (c->rstate == TODO && (rc = w->t.neuronNetIrecv(c->recv, c->rbuf, (int)w->chunk, c->rmh, &c->rreq)) != NRT_SUCCESS)
				fail(w, "neuronNetIrecv", rc, p, "irecv failed");
			if (c->rstate == TODO && c->rreq != NULL)
				c->rstate = POSTED;
			if (c->sstate == TODO && (rc = w->t.neuronNetIsend(c->send, c->sbuf, (int)w->chunk, c->smh, &c->sreq)) != NRT_SUCCESS)
				fail(w, "neuronNetIsend", rc, p, "isend failed");
			if (c->sstate == TODO && c->sreq != NULL)
				c->sstate = POSTED;
			if (c->sstate == POSTED) {
				if ((rc = w->t.neuronNetTest(c->sreq, &done, &size)) != NRT_SUCCESS)
					fail(w, "neuronNetTest", rc, p, "test of a send failed");
				if (done) {
					c->sstate = DONE, c->sreq = NULL;
					w->sent += w->chunk;
				}
			}
			done = 0;
			if (c->rstate == POSTED) {
				if ((rc = w->t.neuronNetTest(c->rreq, &done, &size)) != NRT_SUCCESS)
					fail(w, "neuronNetTest", rc, p, "test of a receive failed");
				if (done) {
					c->rstate = DONE, c->rreq = NULL;
					if ((size_t)size != w->chunk)
						fail(w, "neuronNetTest", size, p, "a receive completed with the wrong size");
					long bad = mismatch(c->rbuf, w->chunk, p, w->rank, k);
					if (bad >= 0) {
						char what[128];
						snprintf(what, sizeof what, "round %d: byte %ld differs", k, bad);
						fail(w, "neuronNetIrecv", 0, p, what);
					}
					w->received += w->chunk;
					w->checked += w->chunk;
				}
			}
			left |= c->sstate != DONE || c->rstate != DONE;
		}
		if (left && past(w))
			fail(w, "neuronNetTest", NRT_TIMEOUT, -1, "transfers not done within the deadline");
	}
}

void run_direct(struct world *w)
{
	if (w->rounds == 0)
		return;
	struct peer *pc = calloc((size_t)w->nranks, sizeof *pc);
	if (pc == NULL)
		fail(w, "calloc", 0, -1, "out of memory");
	NRT_STATUS rc;
	for (int p = 0; p < w->nranks; p++) {
		if (p == w->rank)
			continue;
		if ((rc = w->t.neuronNetListen(0, pc[p].handle, &pc[p].listen)) != NRT_SUCCESS || pc[p].listen == NULL)
			fail(w, "neuronNetListen", rc, p, "listen failed");
	}
	exchange(w, pc);
	connect_all(w, pc);
	for (int p = 0; p < w->nranks; p++) {
		if (p == w->rank)
			continue;
		pc[p].sbuf = buffer(w, w->chunk);
		pc[p].rbuf = buffer(w, w->chunk);
		if ((rc = w->t.neuronNetRegMrOG(pc[p].send, pc[p].sbuf, w->chunk, NCCL_PTR_HOST, &pc[p].smh)) != NRT_SUCCESS)
			fail(w, "neuronNetRegMrOG", rc, p, "registering the send buffer failed");
		if ((rc = w->t.neuronNetRegMrOG(pc[p].recv, pc[p].rbuf, w->chunk, NCCL_PTR_HOST, &pc[p].rmh)) != NRT_SUCCESS)
			fail(w, "neuronNetRegMrOG", rc, p, "registering the receive buffer failed");
	}
	for (int k = 0; k < w->rounds; k++) {
		if (w->vanish_round > 0 && k == w->vanish_round) {
			fflush(stdout);
			_exit(3); /* the fault: gone mid-transfer, nothing closed */
		}
		round_trip(w, pc, k);
	}
	for (int p = 0; p < w->nranks; p++) {
		if (p == w->rank)
			continue;
		if ((rc = w->t.neuronNetDeregMrOG(pc[p].send, pc[p].smh)) != NRT_SUCCESS ||
		    (rc = w->t.neuronNetDeregMrOG(pc[p].recv, pc[p].rmh)) != NRT_SUCCESS)
			fail(w, "neuronNetDeregMrOG", rc, p, "deregistration failed");
		if ((rc = w->t.neuronNetCloseSend(pc[p].send)) != NRT_SUCCESS)
			fail(w, "neuronNetCloseSend", rc, p, "close failed");
		if ((rc = w->t.neuronNetCloseRecv(pc[p].recv)) != NRT_SUCCESS)
			fail(w, "neuronNetCloseRecv", rc, p, "close failed");
		if ((rc = w->t.neuronNetCloseListen(pc[p].listen)) != NRT_SUCCESS)
			fail(w, "neuronNetCloseListen", rc, p, "close failed");
		free(pc[p].sbuf);
		free(pc[p].rbuf);
	}
	free(pc);
}
