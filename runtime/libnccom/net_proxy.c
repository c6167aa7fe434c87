/*
 * The network proxy (extension net-proxy, docs/net-seam.md#proxy): a list
 * of net_ops_info_t ops with their send FIFO (net_src_addr_t) and receive
 * FIFO (net_dest_addr_t), both ending in EXEC_COMPLETE, kept on (comm,
 * stream, proxy id) by neuronStartNetworkProxy, driven one tick at a time
 * by neuronNetworkProxyProgress (the hot, guard-exempt call of
 * docs/sources.md#s000-3) and dropped by neuronStopNetworkProxy. A
 * NET_TRANSFER entry goes through its connector's plugin comm: the mesh
 * connector of dst_rank / src_rank, or the ring's when that is negative.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccom.h"

enum { ENTRY_WAITING, ENTRY_POSTED, ENTRY_DONE };

struct entry {
	int state;
	void *req;
	struct nccom_connector *conn; /* NET_TRANSFER only */
};

struct proxy {
	void *comm;
	uint32_t stream, id;
	net_ops_info_t *ops;
	int n_ops;
	net_src_addr_t *src;
	net_dest_addr_t *dst;
	int n_src, n_dst;
	struct entry *se, *de;
	int posted; /* outstanding requests */
	bool failed;
	struct proxy *next;
};

static pthread_mutex_t proxy_mu = PTHREAD_MUTEX_INITIALIZER;
static struct proxy *proxies;

static struct proxy **find(void *comm, uint32_t stream, uint32_t id)
{
	struct proxy **p = &proxies;
	while (*p && ((*p)->comm != comm || (*p)->stream != stream || (*p)->id != id))
		p = &(*p)->next;
	return p;
}

/* The connector of one NET_TRANSFER entry (rank < 0: the ring's). */
static struct nccom_connector *resolve(void *comm, int rank, bool is_send, int me, int n)
{
	if (rank >= 0)
		return nccom_connector_find(comm, ENC_PATTERN_MESH, rank, is_send);
	int ring = is_send ? (me + 1) % n : (me + n - 1) % n;
	return nccom_connector_find(comm, ENC_PATTERN_RING, ring, is_send);
}

/* One FIFO's shape: EXEC_COMPLETE last and only last, ops in range,
 * transfers sized for the plugin and connected. */
static bool check_fifo(const char *fifo, void *comm, bool is_send, int n_ops, int count, const uint32_t *idx, const net_addr_mark_t *mark,
		       const uint32_t *size, const int *rank, void *const *host, void *const *mh, size_t stride, struct entry *e, int me, int n)
{
#define AT(p, i) (*(const __typeof__(*(p)) *)((const char *)(p) + (size_t)(i) * stride))
	for (int i = 0; i < count; i++) {
		net_addr_mark_t m = AT(mark, i);
		if ((m == EXEC_COMPLETE) != (i == count - 1)) {
			nccom_warn("neuronStartNetworkProxy: %s[%d] of %d: %s", fifo, i, count,
				   m == EXEC_COMPLETE ? "EXEC_COMPLETE before the end" : "the FIFO does not end in EXEC_COMPLETE");
			return false;
		}
		if (m != NET_TRANSFER && m != NET_OP_COMPLETE && m != EXEC_COMPLETE) {
			nccom_warn("neuronStartNetworkProxy: %s[%d]: mark %d is none of NET_TRANSFER, NET_OP_COMPLETE, EXEC_COMPLETE", fifo, i, (int)m);
			return false;
		}
		if (m != EXEC_COMPLETE && AT(idx, i) >= (uint32_t)n_ops) {
			nccom_warn("neuronStartNetworkProxy: %s[%d]: net_op_idx %u is not one of the %d ops", fifo, i, AT(idx, i), n_ops);
			return false;
		}
		if (m != NET_TRANSFER)
			continue;
		if (AT(size, i) > INT_MAX) {
			nccom_warn("neuronStartNetworkProxy: %s[%d]: size %u exceeds the plugin's int", fifo, i, AT(size, i));
			return false;
		}
		e[i].conn = resolve(comm, AT(rank, i), is_send, me, n);
		if (e[i].conn == NULL) {
			nccom_warn("neuronStartNetworkProxy: %s[%d]: no connector %s rank %d (neuronExpandConnectivity builds them)", fifo, i,
				   is_send ? "to" : "from", AT(rank, i) >= 0 ? AT(rank, i) : is_send ? (me + 1) % n : (me + n - 1) % n);
			return false;
		}
		void *pc = is_send ? e[i].conn->send_comm : e[i].conn->recv_comm;
		if (!nccom_connector_covers(e[i].conn, pc, AT(mh, i), AT(host, i), AT(size, i))) {
			nccom_warn("neuronStartNetworkProxy: %s[%d]: nccl_mhandle %p is no registration of the connector %s covering its %u bytes "
				   "(neuronNetRegMr makes them)", fifo, i, AT(mh, i), e[i].conn->label, AT(size, i));
			return false;
		}
	}
#undef AT
	return true;
}

NRT_STATUS neuronStartNetworkProxy(void *comm, uint32_t stream_id, uint32_t proxy_id, net_ops_info_t *ops, int n_ops,
				   net_src_addr_t *src, int n_src, net_dest_addr_t *dst, int n_dst)
{
	int me = 0, n = 0;
	if (nccom_comm_rank(comm, &me, &n) != NRT_SUCCESS || ops == NULL || src == NULL || dst == NULL || n_ops < 1 || n_src < 1 || n_dst < 1)
		return NRT_INVALID;
	if (stream_id >= NCCOM_PROXY_STREAMS) {
		nccom_warn("%s: stream %u is not one of the comm's %d proxy streams", __func__, stream_id, NCCOM_PROXY_STREAMS);
		return NRT_INVALID;
	}
	if (nccom_net_need(__func__) == NULL)
		return NRT_FAILURE;
	struct proxy *p = calloc(1, sizeof *p);
	if (p == NULL)
		return NRT_RESOURCE;
	p->se = calloc((size_t)n_src, sizeof *p->se);
	p->de = calloc((size_t)n_dst, sizeof *p->de);
	if (p->se == NULL || p->de == NULL) {
		free(p->se), free(p->de), free(p);
		return NRT_RESOURCE;
	}
	p->comm = comm, p->stream = stream_id, p->id = proxy_id;
	p->ops = ops, p->n_ops = n_ops, p->src = src, p->n_src = n_src, p->dst = dst, p->n_dst = n_dst;
	if (!check_fifo("src", comm, true, n_ops, n_src, &src->net_op_idx, &src->mark, &src->size, &src->dst_rank, &src->host_addr, &src->nccl_mhandle, sizeof *src, p->se, me, n) ||
	    !check_fifo("dst", comm, false, n_ops, n_dst, &dst->net_op_idx, &dst->mark, &dst->size, &dst->src_rank, &dst->host_addr, &dst->nccl_mhandle, sizeof *dst, p->de, me, n)) {
		free(p->se), free(p->de), free(p);
		return NRT_INVALID;
	}
	for (int i = 0; i < n_src; i++)
		src[i].complete = 0;
	for (int i = 0; i < n_dst; i++)
		dst[i].complete = 0;
	if (pthread_mutex_lock(&proxy_mu) != 0) {
		free(p->se), free(p->de), free(p);
		return NRT_FAILURE;
	}
	bool dup = *find(comm, stream_id, proxy_id) != NULL;
	if (!dup) {
		p->next = proxies;
		proxies = p;
	}
	if (pthread_mutex_unlock(&proxy_mu) != 0)
		return NRT_FAILURE;
	if (dup) {
		nccom_warn("%s: comm %p stream %u already runs proxy %u (neuronStopNetworkProxy first)", __func__, comm, stream_id, proxy_id);
		free(p->se), free(p->de), free(p);
		return NRT_INVALID;
	}
	nccom_info("%s: stream %u proxy %u: %d ops, %d sends, %d receives", __func__, stream_id, proxy_id, n_ops, n_src, n_dst);
	return NRT_SUCCESS;
}

/* Tests the outstanding requests of one FIFO. */
static bool test_fifo(const struct nccom_net *n, struct proxy *p, bool is_send, bool *moved)
{
	int count = is_send ? p->n_src : p->n_dst;
	struct entry *e = is_send ? p->se : p->de;
	for (int i = 0; i < count; i++) {
		if (e[i].state != ENTRY_POSTED)
			continue;
		int done = 0, size = 0;
		ncclResult_t rc = n->test(e[i].req, &done, &size);
		if (rc != ncclSuccess) {
			(void)nccom_net_fail(n, "test", rc, e[i].conn->label); /* the line is the report: the tick fails */
			return false;
		}
		if (!done)
			continue;
		uint32_t want = is_send ? p->src[i].size : p->dst[i].size;
		if (!is_send && (uint32_t)size > want) {
			nccom_warn("NET/Plugin %s: %s: received %d bytes into dst[%d] of %u", n->path, e[i].conn->label, size, i, want);
			return false;
		}
		e[i].state = ENTRY_DONE;
		e[i].req = NULL;
		p->posted--;
		*moved = true;
		if (is_send)
			p->src[i].complete = 1;
		else
			p->dst[i].complete = 1;
	}
	return true;
}

/* Posts the FIFO's next waiting transfers in order, until the plugin says
 * "call again" (a NULL request) or the request cap is reached. */
static bool post_fifo(const struct nccom_net *n, struct proxy *p, bool is_send, bool *moved)
{
	int count = is_send ? p->n_src : p->n_dst;
	struct entry *e = is_send ? p->se : p->de;
	for (int i = 0; i < count && p->posted < NCCL_NET_MAX_REQUESTS; i++) {
		if (e[i].state != ENTRY_WAITING)
			continue;
		net_addr_mark_t m = is_send ? p->src[i].mark : p->dst[i].mark;
		if (m != NET_TRANSFER)
			continue; /* marks complete in finish_marks */
		void *buf = is_send ? p->src[i].host_addr : p->dst[i].host_addr;
		void *mh = is_send ? p->src[i].nccl_mhandle : p->dst[i].nccl_mhandle;
		int size = (int)(is_send ? p->src[i].size : p->dst[i].size);
		void *req = NULL;
		ncclResult_t rc = is_send ? n->isend(e[i].conn->send_comm, buf, size, mh, &req) : n->irecv(e[i].conn->recv_comm, buf, size, mh, &req);
		if (rc != ncclSuccess) {
			(void)nccom_net_fail(n, is_send ? "isend" : "irecv", rc, e[i].conn->label); /* the line is the report: the tick fails */
			return false;
		}
		if (req == NULL)
			return true; /* the plugin is full: next tick */
		e[i].req = req;
		e[i].state = ENTRY_POSTED;
		p->posted++;
		*moved = true;
	}
	return true;
}

/* NET_OP_COMPLETE once every earlier entry of its op is done (the op's
 * completion semaphore is bumped), EXEC_COMPLETE once everything is. */
static void finish_marks(struct proxy *p, bool is_send, bool *moved)
{
	int count = is_send ? p->n_src : p->n_dst;
	struct entry *e = is_send ? p->se : p->de;
	bool all = true;
	for (int i = 0; i < count; i++) {
		net_addr_mark_t m = is_send ? p->src[i].mark : p->dst[i].mark;
		uint32_t op = is_send ? p->src[i].net_op_idx : p->dst[i].net_op_idx;
		if (e[i].state == ENTRY_DONE)
			continue;
		if (m == NET_TRANSFER) {
			all = false;
			continue;
		}
		bool ready = all;
		if (m == NET_OP_COMPLETE) {
			ready = true;
			for (int j = 0; j < i && ready; j++) {
				uint32_t oj = is_send ? p->src[j].net_op_idx : p->dst[j].net_op_idx;
				ready = oj != op || e[j].state == ENTRY_DONE;
			}
		}
		if (!ready) {
			all = false;
			continue;
		}
		e[i].state = ENTRY_DONE;
		*moved = true;
		if (m == NET_OP_COMPLETE) {
			volatile uint32_t *sem = is_send ? p->ops[op].inc_send_complete : p->ops[op].inc_recv_complete;
			if (sem != NULL)
				nec_inc_semaphore(sem, 1); /* reverse leg: the proxy-completion edge */
		}
		if (is_send)
			p->src[i].complete = 1;
		else
			p->dst[i].complete = 1;
	}
}

NRT_STATUS neuronNetworkProxyProgress(void *comm, uint32_t stream_id, uint32_t proxy_id, bool *progressed, bool *failed)
{
	if (progressed == NULL || failed == NULL)
		return NRT_INVALID;
	*progressed = false;
	*failed = false;
	/* A tick without a plugin is a host that skipped neuronInitNet: said
	 * once per tick, which the proxy driver ends on. */
	const struct nccom_net *n = nccom_net_need(__func__);
	if (n == NULL || pthread_mutex_lock(&proxy_mu) != 0)
		return NRT_FAILURE;
	struct proxy *p = *find(comm, stream_id, proxy_id);
	NRT_STATUS st = NRT_SUCCESS;
	if (p == NULL) {
		st = NRT_INVALID;
	} else if (!p->failed) {
		bool moved = false;
		bool ok = test_fifo(n, p, true, &moved) && test_fifo(n, p, false, &moved) && post_fifo(n, p, false, &moved) &&
			  post_fifo(n, p, true, &moved);
		if (ok) {
			finish_marks(p, true, &moved);
			finish_marks(p, false, &moved);
		}
		p->failed = !ok;
		*progressed = moved;
	}
	if (p != NULL && p->failed) {
		*failed = true;
		st = NRT_FAILURE;
	}
	if (pthread_mutex_unlock(&proxy_mu) != 0)
		return NRT_FAILURE;
	if (p == NULL)
		nccom_warn("%s: comm %p stream %u runs no proxy %u", __func__, comm, stream_id, proxy_id);
	return st;
}

/* Waits for p's outstanding requests by d; false when some are left. */
static bool drain(const struct nccom_net *n, struct proxy *p, nccom_deadline d)
{
	while (p->posted > 0 && !p->failed) {
		bool moved = false;
		if (!test_fifo(n, p, true, &moved) || !test_fifo(n, p, false, &moved))
			p->failed = true;
		if (p->posted == 0 || nccom_left_ms(d) == 0)
			break;
		if (!moved) {
			struct timespec ts = {0, 200 * 1000};
			(void)nanosleep(&ts, NULL); /* an early wake only polls sooner */
		}
	}
	return p->posted == 0;
}

static NRT_STATUS stop_where(void *comm, bool all_streams, uint32_t stream_id)
{
	const struct nccom_net *n = nccom_net_plugin();
	if (pthread_mutex_lock(&proxy_mu) != 0)
		return NRT_FAILURE;
	struct proxy *mine = NULL, **pp = &proxies;
	while (*pp) {
		struct proxy *p = *pp;
		if (p->comm == comm && (all_streams || p->stream == stream_id)) {
			*pp = p->next;
			p->next = mine;
			mine = p;
		} else {
			pp = &p->next;
		}
	}
	if (pthread_mutex_unlock(&proxy_mu) != 0)
		nccom_warn("proxies: unlock failed");
	if (mine == NULL)
		return NRT_INVALID;
	NRT_STATUS st = NRT_SUCCESS;
	nccom_deadline d = nccom_op_deadline();
	while (mine) {
		struct proxy *p = mine;
		mine = p->next;
		/* A failed proxy said so on the tick that failed: one line. */
		if (p->failed) {
			st = NRT_FAILURE;
		} else if (n != NULL && !drain(n, p, d)) {
			if (!p->failed)
				nccom_warn("neuronStopNetworkProxy: stream %u proxy %u: %d requests not done within %d s (" ENV_SOCK_TIMEOUT
					   ", a total deadline)", p->stream, p->id, p->posted, nccom_timeout());
			st = p->failed ? NRT_FAILURE : NRT_TIMEOUT;
		}
		free(p->se), free(p->de), free(p);
	}
	return st;
}

NRT_STATUS neuronStopNetworkProxy(void *comm, uint32_t stream_id)
{
	if (!nccom_comm_live(comm))
		return NRT_INVALID;
	NRT_STATUS st = stop_where(comm, false, stream_id);
	if (st == NRT_INVALID)
		nccom_warn("%s: comm %p runs no proxy on stream %u", __func__, comm, stream_id);
	return st;
}

void nccom_proxy_comm_free(void *comm)
{
	(void)stop_where(comm, true, 0); /* NRT_INVALID is a comm with no proxy; a failed drain said so */
}
