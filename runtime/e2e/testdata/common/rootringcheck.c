/*
 * Drives the reference libnccom's checks of the roots' ring records
 * (runtime/libnccom/root_ring.c, docs/bootstrap-hierarchy.md#multi-root-the-roots-ring)
 * for FuzzCRootRing. Reads records {i32 mode, i32 nroots, i32 index,
 * i32 n, i32 L, u32 global, u64 cluster, i64 epoch, u32 a, a bytes,
 * u32 b, b bytes} on stdin, the world being one the caller checked.
 * Mode 0: a is the previous root's first frame (32 bytes) for
 * nccom_root_ring_take_range. Mode 1: a is what the next root sends and b
 * what the previous one sends (each written to one end of a socket pair,
 * then a FIN) for nccom_root_ring_finish, this root being root index
 * with cluster/epoch minted when it is root 0. Mode 2: a is one frame's
 * payload from the previous root past the reply (extended framing) for
 * nccom_root_rec_parse; next_first then holds {u8 done, i32 origin, i32
 * rank, u32 kind} of what it took. Answers each with {i32 status, 28 bytes
 * next_first, u64 cluster, i64 epoch}. Exits 0 at the end of its input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nccom.h"
#include "pipeio.h"

#define PART_MAX (16u << 10)

struct rec {
	int32_t mode, nroots, index, n, L;
	uint32_t global;
	uint64_t cluster;
	int64_t epoch;
};

/* One end of a socket pair holding in and then a FIN, or -1. */
static int holding(const char *in, uint32_t len, int *other)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	int buf = 4 * PART_MAX;
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf) != 0 || setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf) != 0 ||
	    io_all(sv[0], (void *)in, len, 0) != 0 || shutdown(sv[0], SHUT_WR) != 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	*other = sv[0];
	return sv[1];
}

static char *part(uint32_t *len)
{
	if (io_all(STDIN_FILENO, len, sizeof *len, 1) != 0 || *len > PART_MAX)
		return NULL;
	char *p = malloc(*len + 1u);
	if (p != NULL && io_all(STDIN_FILENO, p, *len, 1) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

static int run(const struct rec *h, const char *a, uint32_t al, const char *b, uint32_t bl)
{
	nccom_addr roots[8];
	if (h->nroots < 2 || h->nroots > 8 || h->index < 0 || h->index >= h->nroots)
		return 2;
	for (int i = 0; i < h->nroots; i++) {
		char s[32];
		snprintf(s, sizeof s, "127.0.0.1:%d", 40000 + i);
		if (!nccom_parse_addr(s, &roots[i]))
			return 2;
	}
	struct nccom_root_ring rr = {.nroots = h->nroots, .index = h->index, .n = h->n, .L = h->L, .global = h->global != 0,
				     .roots = roots, .next_fd = -1, .prev_fd = -1, .cluster = h->cluster, .epoch = (time_t)h->epoch};
	nccom_root_range(h->index, h->nroots, h->n, h->L, rr.global, &rr.lo, &rr.hi);
	int32_t status;
	nccl_socket_address_t next_first;
	memset(&next_first, 0, sizeof next_first);
	int peer_a = -1, peer_b = -1;
	if (h->mode == 2) {
		struct nccom_root_rec got;
		char why[BOOTSTRAP_ABORT_TEXT_MAX];
		bool ok = nccom_root_rec_parse(&rr, a, (int)al, "previous root", &got, why, sizeof why);
		status = ok ? (int32_t)NRT_SUCCESS : (int32_t)NRT_FAILURE;
		if (ok) {
			unsigned char *o = (unsigned char *)&next_first;
			o[0] = got.done;
			memcpy(o + 1, &got.origin, 4);
			memcpy(o + 5, &got.rank, 4);
			memcpy(o + 9, &got.kind, 4);
		}
	} else if (h->mode == 0) {
		unsigned char range[sizeof(struct bootstrap_root_range)] = {0};
		if (al != sizeof range)
			return 2;
		memcpy(range, a, al);
		int fd = dup(STDERR_FILENO);
		if (fd < 0)
			return 2;
		status = (int32_t)nccom_root_ring_take_range(&rr, &fd, range, "127.0.0.1:39999");
		if (fd >= 0)
			close(fd);
	} else {
		if ((rr.next_fd = holding(a, al, &peer_a)) < 0 || (rr.prev_fd = holding(b, bl, &peer_b)) < 0)
			return 2;
		nccl_socket_address_t first;
		memcpy(&first, &roots[h->index], sizeof first);
		status = (int32_t)nccom_root_ring_finish(&rr, &first, &next_first);
	}
	nccom_root_ring_close(&rr);
	nccom_close(&peer_a);
	nccom_close(&peer_b);
	uint64_t cluster = rr.cluster;
	int64_t epoch = (int64_t)rr.epoch;
	if (io_all(STDOUT_FILENO, &status, sizeof status, 0) != 0 || io_all(STDOUT_FILENO, &next_first, sizeof next_first, 0) != 0 ||
	    io_all(STDOUT_FILENO, &cluster, sizeof cluster, 0) != 0 || io_all(STDOUT_FILENO, &epoch, sizeof epoch, 0) != 0)
		return 2;
	return 0;
}

int main(void)
{
	nccom_addr lo;
	if (!nccom_parse_addr("127.0.0.1:1", &lo) || nccom_net_init(&lo) != NRT_SUCCESS)
		return 2;
	for (;;) {
		struct rec h;
		if (io_all(STDIN_FILENO, &h, sizeof h, 1) != 0)
			return 0;
		uint32_t al = 0, bl = 0;
		char *a = part(&al), *b = a == NULL ? NULL : part(&bl);
		if (a == NULL || b == NULL)
			return 2;
		int rc = run(&h, a, al, b, bl);
		free(a);
		free(b);
		if (rc != 0)
			return rc;
	}
}
