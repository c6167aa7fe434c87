/*
 * The fuzz driver of neuronStartNetworkProxy's list checks and the proxy's
 * ticks (runtime/libnccom/net_proxy.c, linked in with log.c): a long-lived
 * child answering one record per proxy list on stdin, over a fake comm of
 * 4 ranks and a fake plugin whose requests complete on their first test.
 *
 * Record: u8 n_ops, u8 n_src, u8 n_dst, u8 flags, then n_src and n_dst
 * entries of 8 bytes {u16 op, u8 size, i8 rank, u8 mark, u8 semaphore,
 * u16 pad}. flags bit 0: every other post answers "call again"; bit 1:
 * a receive reports more bytes than it asked for; bit 2: no entry carries a
 * registration. Answer: the start status
 * byte, then the ticks' outcome byte (0 done, 1 failed, 2 not started, 3
 * still running after 256 ticks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccom.h"

static int fake_comm;
static struct nccom_connector conns[2][4][2];
static int flags, posts;
static unsigned char scratch[2][16][256];
static int32_t sizes[64];

bool nccom_comm_live(const void *comm) { return comm == &fake_comm; }
NRT_STATUS nccom_comm_rank(void *comm, int *rank, int *nranks)
{
	if (comm != &fake_comm)
		return NRT_INVALID;
	*rank = 0, *nranks = 4;
	return NRT_SUCCESS;
}
struct nccom_connector *nccom_connector_find(void *comm, enc_pattern_t pattern, int peer, bool is_send)
{
	if (comm != &fake_comm || (pattern != ENC_PATTERN_RING && pattern != ENC_PATTERN_MESH) || peer <= 0 || peer >= 4)
		return NULL;
	struct nccom_connector *c = &conns[pattern][peer][is_send];
	c->send_comm = c->recv_comm = c;
	snprintf(c->label, sizeof c->label, "%s rank %d", is_send ? "send to" : "receive from", peer);
	return c;
}

/* The fake registration covers each entry's scratch buffer whole. */
static int fake_mr;
bool nccom_connector_covers(struct nccom_connector *c, void *pc, void *mh, const void *data, size_t size)
{
	(void)c, (void)pc, (void)data;
	return mh == &fake_mr && size <= sizeof scratch[0][0];
}

/* Requests are slots of sizes[]: the size posted, -1 when free. */
static ncclResult_t post(int size, void **req)
{
	*req = NULL;
	if ((flags & 1) && (posts++ & 1))
		return ncclSuccess;
	for (int i = 0; i < 64; i++)
		if (sizes[i] < 0) {
			sizes[i] = size;
			*req = &sizes[i];
			return ncclSuccess;
		}
	return ncclSuccess;
}
static ncclResult_t f_isend(void *c, void *d, int size, void *mh, void **req)
{
	(void)c, (void)d, (void)mh;
	return post(size, req);
}
static ncclResult_t f_irecv(void *c, void *d, int size, void *mh, void **req)
{
	(void)c, (void)mh;
	if (d != NULL && size > 0)
		memset(d, 0xab, (size_t)size); /* the posted buffer is written whole */
	return post(size, req);
}
static ncclResult_t f_test(void *req, int *done, int *size)
{
	int32_t *s = req;
	if (s < sizes || s >= sizes + 64 || *s < 0)
		return ncclInvalidUsage; /* a request the plugin never gave */
	*done = 1;
	*size = *s + ((flags & 2) ? 1 : 0);
	*s = -1;
	return ncclSuccess;
}
static struct nccom_net fake = {.version = 6, .name = "fake", .path = "fake", .ndev = 1, .isend = f_isend, .irecv = f_irecv, .test = f_test};
const struct nccom_net *nccom_net_plugin(void) { return &fake; }
const struct nccom_net *nccom_net_need(const char *entry)
{
	(void)entry;
	return &fake;
}
NRT_STATUS nccom_net_fail(const struct nccom_net *n, const char *member, ncclResult_t rc, const char *peer)
{
	nccom_warn("NET/Plugin %s: %s returned %d (%s)", n->path, member, (int)rc, peer);
	return NRT_FAILURE;
}
void nec_inc_semaphore(volatile uint32_t *sem, uint32_t val) { *sem += val; }
int64_t nccom_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
nccom_deadline nccom_op_deadline(void) { return nccom_now_ms() + 1000; }
int nccom_left_ms(nccom_deadline d)
{
	int64_t l = d - nccom_now_ms();
	return l > 0 ? (int)l : 0;
}
int nccom_timeout(void) { return 1; }

static bool read_all(void *p, size_t n)
{
	for (size_t k = 0; k < n;) {
		ssize_t r = read(0, (char *)p + k, n - k);
		if (r <= 0)
			return false;
		k += (size_t)r;
	}
	return true;
}

int main(void)
{
	unsigned char hdr[4], e[8];
	while (read_all(hdr, sizeof hdr)) {
		int n_ops = hdr[0] % 5, n_src = hdr[1] % 17, n_dst = hdr[2] % 17;
		flags = hdr[3], posts = 0;
		for (int i = 0; i < 64; i++)
			sizes[i] = -1;
		net_ops_info_t ops[4];
		uint32_t sem[4][2];
		memset(ops, 0, sizeof ops);
		memset(sem, 0, sizeof sem);
		for (int i = 0; i < 4; i++)
			ops[i].inc_send_complete = &sem[i][0], ops[i].inc_recv_complete = &sem[i][1];
		net_src_addr_t src[16];
		net_dest_addr_t dst[16];
		memset(src, 0, sizeof src);
		memset(dst, 0, sizeof dst);
		bool ok = true;
		for (int i = 0; i < n_src + n_dst && ok; i++) {
			if (!(ok = read_all(e, sizeof e)))
				break;
			uint32_t op = (uint32_t)(e[0] | e[1] << 8), size = e[2];
			int rank = (int8_t)e[3];
			net_addr_mark_t mark = (net_addr_mark_t)e[4];
			void *mh = (flags & 4) ? NULL : &fake_mr;
			if (i < n_src)
				src[i] = (net_src_addr_t){.net_op_idx = op, .host_addr = scratch[0][i], .nccl_mhandle = mh, .size = size, .mark = mark, .dst_rank = rank};
			else
				dst[i - n_src] = (net_dest_addr_t){.net_op_idx = op, .host_addr = scratch[1][i - n_src], .nccl_mhandle = mh, .size = size, .mark = mark, .src_rank = rank};
		}
		if (!ok)
			break;
		NRT_STATUS rc = neuronStartNetworkProxy(&fake_comm, 0, 1, n_ops ? ops : NULL, n_ops, n_src ? src : NULL, n_src, n_dst ? dst : NULL, n_dst);
		unsigned char out[2] = {(unsigned char)rc, 2};
		if (rc == NRT_SUCCESS) {
			out[1] = 3;
			for (int t = 0; t < 256; t++) {
				bool progressed = false, failed = false;
				NRT_STATUS pr = neuronNetworkProxyProgress(&fake_comm, 0, 1, &progressed, &failed);
				if (failed || pr != NRT_SUCCESS) {
					out[1] = 1;
					break;
				}
				if (src[n_src - 1].complete && dst[n_dst - 1].complete) {
					out[1] = 0;
					break;
				}
			}
			NRT_STATUS st = neuronStopNetworkProxy(&fake_comm, 0);
			if (st != NRT_SUCCESS && out[1] == 0)
				out[1] = 4; /* a finished list that does not stop cleanly */
		}
		if (write(1, out, sizeof out) != (ssize_t)sizeof out)
			return 1;
	}
	return 0;
}
