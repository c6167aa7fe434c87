/*
 * The 1:1 net entry points: each forwards to the member of the plugin table
 * neuronInitNet chose (net_plugin.c), in the v4 shapes the exports have
 * (facts FORWARD rows 24-36). Connect, accept, isend and irecv keep the
 * plugin's contract: success with a NULL out-pointer means "call again"
 * (docs/net-seam.md#calling). A failed member is one line naming the
 * plugin, the member and the comm it was called on, and NRT_FAILURE.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nccom.h"

/* The registrations made through neuronNetRegMrOG, so a comm closed with
 * some left releases them first: nothing stays registered on a plugin comm
 * that is gone. */
struct og_mr {
	void *comm, *mhandle;
	struct og_mr *next;
};
static pthread_mutex_t og_mu = PTHREAD_MUTEX_INITIALIZER;
static struct og_mr *og_mrs;

static bool og_add(void *comm, void *mh)
{
	struct og_mr *m = malloc(sizeof *m);
	if (m == NULL || pthread_mutex_lock(&og_mu) != 0) {
		free(m);
		return false;
	}
	*m = (struct og_mr){comm, mh, og_mrs};
	og_mrs = m;
	return pthread_mutex_unlock(&og_mu) == 0;
}

/* Takes (comm, mh) out of the list; mh NULL: the first of comm's. */
static void *og_take(void *comm, void *mh)
{
	if (pthread_mutex_lock(&og_mu) != 0)
		return NULL;
	struct og_mr **p = &og_mrs;
	while (*p && ((*p)->comm != comm || (mh != NULL && (*p)->mhandle != mh)))
		p = &(*p)->next;
	struct og_mr *m = *p;
	void *got = NULL;
	if (m) {
		*p = m->next;
		got = m->mhandle;
		free(m);
	}
	if (pthread_mutex_unlock(&og_mu) != 0)
		return NULL;
	return got;
}

/* Releases what is left registered on comm before it closes. */
static NRT_STATUS og_release(const struct nccom_net *n, void *comm, const char *closing)
{
	int k = 0;
	NRT_STATUS st = NRT_SUCCESS;
	for (void *mh; (mh = og_take(comm, NULL)) != NULL; k++) {
		ncclResult_t rc = n->dereg_mr(comm, mh);
		if (rc != ncclSuccess) {
			char peer[64];
			snprintf(peer, sizeof peer, "comm %p", comm);
			st = nccom_net_fail(n, "deregMr", rc, peer);
		}
	}
	if (k > 0)
		nccom_warn("%s: comm %p still held %d registrations of neuronNetRegMrOG; released before the close", closing, comm, k);
	return st;
}

#define NEED(p)                          \
	do {                             \
		if ((p) == NULL)         \
			return NRT_INVALID; \
	} while (0)

/* The plugin, or the entry point's failure. */
#define PLUGIN(n)                                         \
	const struct nccom_net *n = nccom_net_need(__func__); \
	if (n == NULL)                                    \
		return NRT_FAILURE;

static NRT_STATUS done(const struct nccom_net *n, const char *member, ncclResult_t rc, const void *comm)
{
	if (rc == ncclSuccess)
		return NRT_SUCCESS;
	char peer[64];
	snprintf(peer, sizeof peer, "comm %p", comm);
	return nccom_net_fail(n, member, rc, peer);
}

NRT_STATUS neuronNetListen(int dev, void *handle, void **listen_comm)
{
	NEED(handle);
	NEED(listen_comm);
	PLUGIN(n);
	if (dev < 0 || dev >= n->ndev) {
		nccom_warn("%s: device %d is not one of the plugin's %d (%s)", __func__, dev, n->ndev, n->path);
		return NRT_INVALID;
	}
	*listen_comm = NULL;
	return done(n, "listen", n->listen(dev, handle, listen_comm), NULL);
}

NRT_STATUS neuronNetConnect(int dev, void *handle, void **send_comm)
{
	NEED(handle);
	NEED(send_comm);
	PLUGIN(n);
	if (dev < 0 || dev >= n->ndev) {
		nccom_warn("%s: device %d is not one of the plugin's %d (%s)", __func__, dev, n->ndev, n->path);
		return NRT_INVALID;
	}
	*send_comm = NULL;
	return done(n, "connect", n->connect(dev, handle, send_comm), NULL);
}

NRT_STATUS neuronNetAccept(void *listen_comm, void **recv_comm)
{
	NEED(listen_comm);
	NEED(recv_comm);
	PLUGIN(n);
	*recv_comm = NULL;
	return done(n, "accept", n->accept(listen_comm, recv_comm), listen_comm);
}

NRT_STATUS neuronNetRegMrOG(void *comm, void *data, size_t size, int type, void **mhandle)
{
	NEED(comm);
	NEED(mhandle);
	PLUGIN(n);
	*mhandle = NULL;
	NRT_STATUS st = done(n, "regMr", n->reg_mr(comm, data, size, type, mhandle), comm);
	if (st != NRT_SUCCESS || *mhandle == NULL)
		return st != NRT_SUCCESS ? st : NRT_FAILURE;
	if (!og_add(comm, *mhandle)) {
		if (n->dereg_mr(comm, *mhandle) != ncclSuccess)
			nccom_warn("%s: deregMr after a failed bookkeeping failed too", __func__);
		*mhandle = NULL;
		return NRT_RESOURCE;
	}
	return NRT_SUCCESS;
}

NRT_STATUS neuronNetDeregMrOG(void *comm, void *mhandle)
{
	NEED(comm);
	NEED(mhandle);
	PLUGIN(n);
	if (og_take(comm, mhandle) == NULL) {
		nccom_warn("%s: %p is no registration neuronNetRegMrOG made on comm %p", __func__, mhandle, comm);
		return NRT_INVALID;
	}
	return done(n, "deregMr", n->dereg_mr(comm, mhandle), comm);
}

/* Neuron-only (getMrKey, rma_supported): a v4 table has no such member. */
NRT_STATUS neuronNetGetMrKey(void *mhandle, uint64_t *key)
{
	NEED(mhandle);
	NEED(key);
	PLUGIN(n);
	if (n->get_mr_key == NULL) {
		nccom_warn("NET/Plugin %s (ncclNetPlugin_v%d): the table has no getMrKey (%s)", n->path, n->version,
			   n->version == 4 ? "v4 predates the Neuron-only members" : "the member is NULL");
		return NRT_FAILURE;
	}
	return done(n, "getMrKey", n->get_mr_key(mhandle, key), mhandle);
}

NRT_STATUS neuronNetIsend(void *send_comm, void *data, int size, void *mhandle, void **request)
{
	NEED(send_comm);
	NEED(request);
	PLUGIN(n);
	if (size < 0)
		return NRT_INVALID;
	*request = NULL;
	return done(n, "isend", n->isend(send_comm, data, size, mhandle, request), send_comm);
}

NRT_STATUS neuronNetIrecv(void *recv_comm, void *data, int size, void *mhandle, void **request)
{
	NEED(recv_comm);
	NEED(request);
	PLUGIN(n);
	if (size < 0)
		return NRT_INVALID;
	*request = NULL;
	return done(n, "irecv", n->irecv(recv_comm, data, size, mhandle, request), recv_comm);
}

/* A table without iflush has nothing to flush: host memory is coherent, so
 * the flush is complete at once (*request stays NULL, which Test is not
 * given). */
NRT_STATUS neuronNetIflush(void *recv_comm, void *data, int size, void *mhandle, void **request)
{
	NEED(recv_comm);
	NEED(request);
	PLUGIN(n);
	*request = NULL;
	if (n->iflush == NULL)
		return NRT_SUCCESS;
	return done(n, "iflush", n->iflush(recv_comm, data, size, mhandle, request), recv_comm);
}

NRT_STATUS neuronNetTest(void *request, int *done_out, int *size)
{
	NEED(request);
	NEED(done_out);
	NEED(size);
	PLUGIN(n);
	*done_out = 0;
	*size = 0;
	return done(n, "test", n->test(request, done_out, size), request);
}

NRT_STATUS neuronNetCloseSend(void *send_comm)
{
	NEED(send_comm);
	PLUGIN(n);
	NRT_STATUS st = og_release(n, send_comm, __func__);
	NRT_STATUS cl = done(n, "closeSend", n->close_send(send_comm), send_comm);
	return cl != NRT_SUCCESS ? cl : st;
}

NRT_STATUS neuronNetCloseRecv(void *recv_comm)
{
	NEED(recv_comm);
	PLUGIN(n);
	NRT_STATUS st = og_release(n, recv_comm, __func__);
	NRT_STATUS cl = done(n, "closeRecv", n->close_recv(recv_comm), recv_comm);
	return cl != NRT_SUCCESS ? cl : st;
}

NRT_STATUS neuronNetCloseListen(void *listen_comm)
{
	NEED(listen_comm);
	PLUGIN(n);
	return done(n, "closeListen", n->close_listen(listen_comm), listen_comm);
}
