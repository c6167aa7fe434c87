/* The double's data path: registrations, and framed sends and receives
 * ({u32 length, payload}) progressed in order by test. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netplugin.h"

static atomic_int live_mrs;
static atomic_ulong next_key = 1;

__attribute__((visibility("default"))) int nrtabi_netplugin_live_mrs(void) { return atomic_load(&live_mrs); }

ncclResult_t np_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	if (comm == NULL || mhandle == NULL || (data == NULL && size > 0))
		return ncclInvalidArgument;
	if (type != NCCL_PTR_HOST) {
		NP_WARN("regMr: pointer type %d; the double registers host memory (NCCL_PTR_HOST) only", type);
		return ncclInvalidArgument;
	}
	struct np_mr *m = calloc(1, sizeof *m);
	if (m == NULL)
		return ncclSystemError;
	*m = (struct np_mr){.magic = NP_MR_MAGIC, .data = data, .size = size, .key = atomic_fetch_add(&next_key, 1)};
	atomic_fetch_add(&live_mrs, 1);
	*mhandle = m;
	return ncclSuccess;
}

ncclResult_t np_dereg_mr(void *comm, void *mhandle)
{
	struct np_mr *m = mhandle;
	if (comm == NULL || m == NULL || m->magic != NP_MR_MAGIC)
		return ncclInvalidArgument;
	m->magic = 0;
	free(m);
	atomic_fetch_sub(&live_mrs, 1);
	return ncclSuccess;
}

ncclResult_t np_get_mr_key(void *mhandle, uint64_t *key)
{
	const struct np_mr *m = mhandle;
	if (m == NULL || key == NULL || m->magic != NP_MR_MAGIC)
		return ncclInvalidArgument;
	*key = m->key;
	return ncclSuccess;
}

static bool in_mr(const struct np_mr *m, const void *data, int size)
{
	if (m == NULL)
		return true; /* the double moves unregistered host memory too */
	const char *b = m->data, *d = data;
	return m->magic == NP_MR_MAGIC && d >= b && (size_t)(d - b) + (size_t)size <= m->size;
}

static ncclResult_t post(struct np_comm *c, bool is_send, void *data, int size, void *mh, void **req)
{
	if (c == NULL || req == NULL || size < 0 || (data == NULL && size > 0) || c->is_send != is_send)
		return ncclInvalidArgument;
	if (!in_mr(mh, data, size)) {
		NP_WARN("%s: %d bytes at %p are outside the registration", is_send ? "isend" : "irecv", size, data);
		return ncclInvalidArgument;
	}
	*req = NULL;
	if (c->broken)
		return ncclRemoteError;
	if (c->count == NCCL_NET_MAX_REQUESTS)
		return ncclSuccess; /* full: the caller calls again */
	struct np_req *r = &c->reqs[(c->head + c->count) % NCCL_NET_MAX_REQUESTS];
	*r = (struct np_req){.comm = c, .used = true, .is_send = is_send, .buf = data, .size = (uint32_t)size, .hdr = (uint32_t)size};
	c->count++;
	*req = r;
	return ncclSuccess;
}

ncclResult_t np_isend(void *c, void *data, int size, void *mh, void **req) { return post(c, true, data, size, mh, req); }
ncclResult_t np_irecv(void *c, void *data, int size, void *mh, void **req) { return post(c, false, data, size, mh, req); }

/* Host memory needs no flush: done at once. */
ncclResult_t np_iflush(void *c, void *data, int size, void *mh, void **req)
{
	(void)data, (void)size, (void)mh;
	if (c == NULL || req == NULL)
		return ncclInvalidArgument;
	*req = NULL;
	return ncclSuccess;
}

/* Moves bytes of r until done or the socket would block: 1 done, 0 not
 * yet, -1 failed. */
static int step(struct np_req *r)
{
	struct np_comm *c = r->comm;
	while (!r->done) {
		ssize_t n;
		if (r->hdr_off < sizeof r->hdr) {
			char *h = (char *)&r->hdr + r->hdr_off;
			size_t left = sizeof r->hdr - r->hdr_off;
			n = r->is_send ? send(c->fd, h, left, MSG_NOSIGNAL) : recv(c->fd, h, left, 0);
		} else {
			if (r->hdr_off == sizeof r->hdr && !r->is_send && r->off == 0 && r->hdr > r->size) {
				NP_WARN("irecv: the peer sends %u bytes into a %u-byte receive", r->hdr, r->size);
				return -1;
			}
			if (r->off == r->hdr) {
				r->done = true;
				r->got = r->hdr;
				break;
			}
#ifdef NETPLUGIN_FAIL_AFTER
			if (r->is_send && c->moved >= (uint64_t)(NETPLUGIN_FAIL_AFTER)) {
				NP_WARN("isend: injected failure after %llu bytes (NETPLUGIN_FAIL_AFTER)", (unsigned long long)c->moved);
				return -1;
			}
#endif
			size_t left = r->hdr - r->off;
			n = r->is_send ? send(c->fd, r->buf + r->off, left, MSG_NOSIGNAL) : recv(c->fd, r->buf + r->off, left, 0);
			if (n > 0) {
				r->off += (uint32_t)n;
				c->moved += (uint64_t)n;
				continue;
			}
		}
		if (n > 0) {
			r->hdr_off += (uint32_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		NP_WARN("%s: the peer is gone after %llu bytes (%s)", r->is_send ? "isend" : "irecv", (unsigned long long)c->moved,
			n == 0 ? "connection closed" : strerror(errno));
		return -1;
	}
	return 1;
}

ncclResult_t np_test(void *req, int *done, int *size)
{
	struct np_req *r = req;
	if (r == NULL || done == NULL || !r->used)
		return ncclInvalidArgument;
	struct np_comm *c = r->comm;
	*done = 0;
	/* In order: every request before r first. */
	for (int i = 0; i < c->count && !r->done; i++) {
		struct np_req *q = &c->reqs[(c->head + i) % NCCL_NET_MAX_REQUESTS];
		if (q->done)
			continue;
		int s = step(q);
		if (s < 0) {
			c->broken = true;
			return ncclRemoteError;
		}
		if (s == 0)
			break;
	}
	if (!r->done)
		return ncclSuccess;
	*done = 1;
	if (size != NULL)
		*size = (int)r->got;
	r->used = false;
	while (c->count > 0 && !c->reqs[c->head].used) {
		c->head = (c->head + 1) % NCCL_NET_MAX_REQUESTS;
		c->count--;
	}
	return ncclSuccess;
}
