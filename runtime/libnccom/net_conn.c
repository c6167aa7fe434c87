/*
 * Connectors: one plugin connection per (comm, pattern, peer, direction),
 * built collectively by neuronExpandConnectivity over the comm's bootstrap
 * and looked up by neuronGetNetConnector, neuronNetRegMr/DeregMr and the
 * proxy (extensions net-connectors and net-comm-regmr,
 * docs/net-seam.md#connectors). A receiver listens and sends its handle to
 * the sender by bootstrap send; both sides then call connect / accept until
 * the plugin hands out the comm, within one deadline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccom.h"

static pthread_mutex_t conn_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nccom_connector *connectors;

static const char *pattern_name(enc_pattern_t p)
{
	return p == ENC_PATTERN_RING ? "ring" : p == ENC_PATTERN_MESH ? "mesh" : "?";
}

static struct nccom_connector *find_locked(void *comm, enc_pattern_t pattern, int peer, bool is_send)
{
	for (struct nccom_connector *c = connectors; c; c = c->next)
		if (c->comm == comm && c->pattern == pattern && c->peer == peer && c->is_send == is_send)
			return c;
	return NULL;
}

struct nccom_connector *nccom_connector_find(void *comm, enc_pattern_t pattern, int peer, bool is_send)
{
	if (pthread_mutex_lock(&conn_mu) != 0)
		return NULL;
	struct nccom_connector *c = find_locked(comm, pattern, peer, is_send);
	if (pthread_mutex_unlock(&conn_mu) != 0)
		return NULL;
	return c;
}

/* Releases a connector's registrations, then its plugin comms; every
 * failure is its own line, and the rest is released regardless. */
static NRT_STATUS connector_close(const struct nccom_net *n, struct nccom_connector *c)
{
	NRT_STATUS st = NRT_SUCCESS;
	while (c->mrs) {
		struct nccom_mr *m = c->mrs;
		c->mrs = m->next;
		ncclResult_t rc = n->dereg_mr(m->plugin_comm, m->mhandle);
		if (rc != ncclSuccess)
			st = nccom_net_fail(n, "deregMr", rc, c->label);
		free(m);
	}
	ncclResult_t rc;
	if (c->send_comm && (rc = n->close_send(c->send_comm)) != ncclSuccess)
		st = nccom_net_fail(n, "closeSend", rc, c->label);
	if (c->recv_comm && (rc = n->close_recv(c->recv_comm)) != ncclSuccess)
		st = nccom_net_fail(n, "closeRecv", rc, c->label);
	if (c->listen_comm && (rc = n->close_listen(c->listen_comm)) != ncclSuccess)
		st = nccom_net_fail(n, "closeListen", rc, c->label);
	c->send_comm = c->recv_comm = c->listen_comm = NULL;
	return st;
}

/* The connectors connectivity asks of this rank, skipping built ones. */
static int plan(void *comm, enc_net_connectivity_t how, int rank, int nranks, struct nccom_connector **out)
{
	int k = 0;
	struct nccom_connector *list = NULL;
#define ADD(pat, p, snd)                                                                                      \
	do {                                                                                                  \
		if (nccom_connector_find(comm, pat, p, snd) != NULL)                                          \
			break;                                                                                \
		struct nccom_connector *c = calloc(1, sizeof *c);                                             \
		if (c == NULL)                                                                                \
			return -1;                                                                            \
		c->comm = comm, c->pattern = pat, c->peer = p, c->is_send = snd;                              \
		snprintf(c->label, sizeof c->label, "%s rank %d (%s)", snd ? "send to" : "receive from", p, \
			 pattern_name(pat));                                                                  \
		c->next = list;                                                                               \
		list = c;                                                                                     \
		k++;                                                                                          \
	} while (0)
	*out = NULL;
	if (how == ENC_CONNECTIVITY_DEFAULT) {
		ADD(ENC_PATTERN_RING, (rank + 1) % nranks, true);
		ADD(ENC_PATTERN_RING, (rank + nranks - 1) % nranks, false);
	} else {
		for (int p = 0; p < nranks; p++) {
			bool rdh_peer = false;
			for (int b = 1; b < nranks && b > 0; b <<= 1)
				rdh_peer |= (rank ^ b) == p;
			if (p == rank || (how == ENC_CONNECTIVITY_RDH && !rdh_peer))
				continue;
			ADD(ENC_PATTERN_MESH, p, true);
			ADD(ENC_PATTERN_MESH, p, false);
		}
	}
#undef ADD
	*out = list;
	return k;
}

static void free_list(const struct nccom_net *n, struct nccom_connector *list)
{
	while (list) {
		struct nccom_connector *c = list;
		list = c->next;
		if (n != NULL)
			(void)connector_close(n, c); /* each failure is its own line */
		free(c);
	}
}

static void nap(void)
{
	struct timespec ts = {0, 200 * 1000};
	(void)nanosleep(&ts, NULL); /* an early wake only polls sooner */
}

/* The handles (receivers to senders), then connect / accept to the end. */
static NRT_STATUS establish(const struct nccom_net *n, struct nccom_bootstrap *b, struct nccom_connector *list, unsigned char (*handles)[NCCL_NET_HANDLE_MAXSIZE])
{
	int hs = nccom_net_handle_size(n), i = 0;
	ncclResult_t rc;
	NRT_STATUS st;
	for (struct nccom_connector *c = list; c; c = c->next, i++) {
		if (c->is_send)
			continue;
		memset(handles[i], 0, sizeof handles[i]);
		if ((rc = n->listen(0, handles[i], &c->listen_comm)) != ncclSuccess || c->listen_comm == NULL)
			return nccom_net_fail(n, "listen", rc, c->label);
		if ((st = nccom_bootstrap_send(b, c->peer, handles[i], hs)) != NRT_SUCCESS) {
			nccom_warn("NET/Plugin %s: the handle did not reach rank %d (bootstrap send)", n->path, c->peer);
			return st;
		}
	}
	i = 0;
	for (struct nccom_connector *c = list; c; c = c->next, i++)
		if (c->is_send && (st = nccom_bootstrap_recv(b, c->peer, handles[i], hs)) != NRT_SUCCESS) {
			nccom_warn("NET/Plugin %s: no handle from rank %d (bootstrap receive)", n->path, c->peer);
			return st;
		}
	nccom_deadline d = nccom_op_deadline();
	for (;;) {
		bool pending = false;
		i = 0;
		for (struct nccom_connector *c = list; c; c = c->next, i++) {
			if (c->is_send && c->send_comm == NULL) {
				if ((rc = n->connect(0, handles[i], &c->send_comm)) != ncclSuccess)
					return nccom_net_fail(n, "connect", rc, c->label);
				pending |= c->send_comm == NULL;
			} else if (!c->is_send && c->recv_comm == NULL) {
				if ((rc = n->accept(c->listen_comm, &c->recv_comm)) != ncclSuccess)
					return nccom_net_fail(n, "accept", rc, c->label);
				pending |= c->recv_comm == NULL;
			}
		}
		if (!pending)
			return NRT_SUCCESS;
		if (nccom_left_ms(d) == 0) {
			for (struct nccom_connector *c = list; c; c = c->next)
				if ((c->is_send && !c->send_comm) || (!c->is_send && !c->recv_comm)) {
					nccom_warn("NET/Plugin %s: %s: %s not done within %d s (" ENV_SOCK_TIMEOUT ", a total deadline)", n->path,
						   c->is_send ? "connect" : "accept", c->label, nccom_timeout());
					break;
				}
			return NRT_TIMEOUT;
		}
		nap();
	}
}

NRT_STATUS neuronExpandConnectivity(void *comm, enc_net_connectivity_t connectivity)
{
	if (!nccom_comm_live(comm))
		return NRT_INVALID;
	if (connectivity != ENC_CONNECTIVITY_DEFAULT && connectivity != ENC_CONNECTIVITY_MESH && connectivity != ENC_CONNECTIVITY_RDH) {
		nccom_warn("%s: connectivity %d is none of MESH (0), RDH (1), DEFAULT (2)", __func__, (int)connectivity);
		return NRT_INVALID;
	}
	const struct nccom_net *n = nccom_net_need(__func__);
	if (n == NULL)
		return NRT_FAILURE;
	struct ncclComm *cm = comm;
	struct nccom_bootstrap *b = cm->bootstrap;
	if (b == NULL || b->st.nranks < 2) {
		nccom_warn("%s: comm %p has no peer to connect to (a world of one)", __func__, comm);
		return NRT_INVALID;
	}
	struct nccom_connector *list = NULL;
	int k = plan(comm, connectivity, b->st.rank, b->st.nranks, &list);
	if (k < 0) {
		free_list(NULL, list);
		return NRT_RESOURCE;
	}
	NRT_STATUS st = NRT_SUCCESS;
	if (k > 0) {
		unsigned char (*handles)[NCCL_NET_HANDLE_MAXSIZE] = calloc((size_t)k, sizeof *handles);
		st = handles == NULL ? NRT_RESOURCE : establish(n, b, list, handles);
		free(handles);
	}
	if (st != NRT_SUCCESS) {
		free_list(n, list); /* nothing half-built stays */
		return st;
	}
	if (pthread_mutex_lock(&conn_mu) != 0) {
		free_list(n, list);
		return NRT_FAILURE;
	}
	while (list) {
		struct nccom_connector *c = list;
		list = c->next;
		c->next = connectors;
		connectors = c;
	}
	cm->net_conn = connectivity;
	if (pthread_mutex_unlock(&conn_mu) != 0)
		return NRT_FAILURE;
	nccom_info("%s: comm %p rank %d: %d connectors built", __func__, comm, b->st.rank, k);
	return NRT_SUCCESS;
}

NRT_STATUS neuronGetNetConnector(void *comm, enc_pattern_t pattern, int peer, bool is_send, void **connector)
{
	if (connector == NULL || !nccom_comm_live(comm))
		return NRT_INVALID;
	*connector = nccom_connector_find(comm, pattern, peer, is_send);
	if (*connector == NULL) {
		nccom_warn("%s: comm %p has no %s connector %s rank %d (neuronExpandConnectivity builds them)", __func__, comm,
			   pattern_name(pattern), is_send ? "to" : "from", peer);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

/* The plugin comm of a connector comm_type names. */
static void *plugin_comm(const struct nccom_connector *c, ofi_comm_type_t t)
{
	switch (t) {
	case NET_SEND_COMM:
		return c->send_comm;
	case NET_RECV_COMM:
		return c->recv_comm;
	case NET_RECV_LISTEN_COMM:
		return c->listen_comm;
	default:
		return NULL; /* LOCAL_*: intra-node, not the net plugin's */
	}
}

/* mr_target finds what neuronNetRegMr and neuronNetDeregMr work on: the
 * loaded net plugin, comm's connector and its plugin comm of type t.
 * NRT_FAILURE with no plugin, NRT_INVALID with no such connector, each
 * said under entry's name. */
static NRT_STATUS mr_target(const char *entry, void *comm, enc_pattern_t pattern, int peer, bool is_send, ofi_comm_type_t t,
			    const struct nccom_net **n, struct nccom_connector **cp, void **pc)
{
	*n = nccom_net_need(entry);
	if (*n == NULL)
		return NRT_FAILURE;
	if (!nccom_comm_live(comm))
		return NRT_INVALID;
	struct nccom_connector *c = nccom_connector_find(comm, pattern, peer, is_send);
	if (c == NULL) {
		nccom_warn("%s: comm %p has no %s connector %s rank %d", entry, comm, pattern_name(pattern), is_send ? "to" : "from", peer);
		return NRT_INVALID;
	}
	*pc = plugin_comm(c, t);
	if (*pc == NULL) {
		nccom_warn("%s: the connector %s has no comm of type %d (NET_SEND_COMM on a send connector, NET_RECV_COMM or NET_RECV_LISTEN_COMM on a receive one)",
			   entry, c->label, (int)t);
		return NRT_INVALID;
	}
	*cp = c;
	return NRT_SUCCESS;
}

NRT_STATUS neuronNetRegMr(void *comm, enc_pattern_t pattern, int peer, bool is_send, ofi_comm_type_t comm_type, void *data,
			  size_t size, int ptr_type, void **mhandle)
{
	if (mhandle == NULL)
		return NRT_INVALID;
	*mhandle = NULL;
	const struct nccom_net *n = NULL;
	struct nccom_connector *c = NULL;
	void *pc = NULL;
	NRT_STATUS st = mr_target(__func__, comm, pattern, peer, is_send, comm_type, &n, &c, &pc);
	if (st != NRT_SUCCESS)
		return st;
	struct nccom_mr *m = calloc(1, sizeof *m);
	if (m == NULL)
		return NRT_RESOURCE;
	ncclResult_t rc = n->reg_mr(pc, data, size, ptr_type, &m->mhandle);
	if (rc != ncclSuccess || m->mhandle == NULL) {
		free(m);
		return nccom_net_fail(n, "regMr", rc, c->label);
	}
	m->plugin_comm = pc;
	m->data = data;
	m->size = size;
	if (pthread_mutex_lock(&conn_mu) != 0) {
		if (n->dereg_mr(pc, m->mhandle) != ncclSuccess)
			nccom_warn("%s: deregMr after a failed lock failed too", __func__);
		free(m);
		return NRT_FAILURE;
	}
	m->next = c->mrs;
	c->mrs = m;
	*mhandle = m->mhandle;
	if (pthread_mutex_unlock(&conn_mu) != 0)
		return NRT_FAILURE;
	return NRT_SUCCESS;
}

bool nccom_connector_covers(struct nccom_connector *c, void *pc, void *mh, const void *data, size_t size)
{
	if (mh == NULL || pthread_mutex_lock(&conn_mu) != 0)
		return false;
	bool ok = false;
	const char *d = data;
	for (const struct nccom_mr *m = c->mrs; m && !ok; m = m->next)
		ok = m->mhandle == mh && m->plugin_comm == pc && d >= m->data && (size_t)(d - m->data) <= m->size && size <= m->size - (size_t)(d - m->data);
	if (pthread_mutex_unlock(&conn_mu) != 0)
		return false;
	return ok;
}

NRT_STATUS neuronNetDeregMr(void *comm, enc_pattern_t pattern, int peer, bool is_send, ofi_comm_type_t comm_type, void *mhandle)
{
	if (mhandle == NULL)
		return NRT_INVALID;
	const struct nccom_net *n = NULL;
	struct nccom_connector *c = NULL;
	void *pc = NULL;
	NRT_STATUS st = mr_target(__func__, comm, pattern, peer, is_send, comm_type, &n, &c, &pc);
	if (st != NRT_SUCCESS)
		return st;
	if (pthread_mutex_lock(&conn_mu) != 0)
		return NRT_FAILURE;
	struct nccom_mr **p = &c->mrs;
	while (*p && ((*p)->mhandle != mhandle || (*p)->plugin_comm != pc))
		p = &(*p)->next;
	struct nccom_mr *m = *p;
	if (m)
		*p = m->next;
	if (pthread_mutex_unlock(&conn_mu) != 0)
		return NRT_FAILURE;
	if (m == NULL) {
		nccom_warn("%s: %p is no registration of the connector %s", __func__, mhandle, c->label);
		return NRT_INVALID;
	}
	free(m);
	ncclResult_t rc = n->dereg_mr(pc, mhandle);
	return rc == ncclSuccess ? NRT_SUCCESS : nccom_net_fail(n, "deregMr", rc, c->label);
}

void nccom_connector_comm_free(void *comm)
{
	const struct nccom_net *n = nccom_net_plugin();
	if (pthread_mutex_lock(&conn_mu) != 0)
		return;
	struct nccom_connector *mine = NULL, **p = &connectors;
	while (*p) {
		struct nccom_connector *c = *p;
		if (c->comm == comm) {
			*p = c->next;
			c->next = mine;
			mine = c;
		} else {
			p = &c->next;
		}
	}
	if (pthread_mutex_unlock(&conn_mu) != 0)
		nccom_warn("connectors: unlock failed");
	free_list(n, mine);
}
