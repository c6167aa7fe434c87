/*
 * Drives the reference libnccom's reading of abort frames
 * (runtime/libnccom/frame.c, docs/bootstrap-hierarchy.md#abort-frames) for
 * FuzzCAbortFrame, in the framing NRTABI_BOOTSTRAP_FRAMING names. Reads
 * records {u32 mode, u32 want, u32 len, len bytes} on stdin; the bytes are
 * what a ring neighbour sent before it hung up (written to one end of a
 * socket pair, then a FIN). Mode 0 runs nccom_frame_find_abort on the
 * other end; mode 1 reads one frame header and runs nccom_frame_check
 * with want bytes due (a short header answers rc 2). Answers each with
 * {i32 rc, 52 bytes bootstrap_abort_info, u32 n, n bytes}: the text of the
 * abort (rc 1) or the refusal (rc -1), nothing else. Exits 0 at the end of
 * its input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nccom.h"
#include "pipeio.h"

/* More than any record: the writes below never wait on the reader. */
#define RECORD_MAX (64u << 10)

static int answer(int32_t rc, const struct nccom_abort *ab)
{
	uint32_t n = 0;
	if (rc == 1)
		n = ab->len;
	else if (rc == -1)
		n = (uint32_t)strnlen(ab->text, sizeof ab->text);
	if (n > BOOTSTRAP_ABORT_TEXT_MAX)
		return 3; /* an abort longer than the bound got through */
	if (io_all(STDOUT_FILENO, &rc, sizeof rc, 0) != 0 || io_all(STDOUT_FILENO, (void *)&ab->info, sizeof ab->info, 0) != 0 ||
	    io_all(STDOUT_FILENO, &n, sizeof n, 0) != 0 || io_all(STDOUT_FILENO, (void *)ab->text, n, 0) != 0)
		return 2;
	return 0;
}

static int run(uint32_t mode, uint32_t want, const char *in, uint32_t len)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 2;
	int buf = 2 * RECORD_MAX;
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf) != 0 || setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf) != 0)
		return 2;
	if (io_all(sv[0], (void *)in, len, 0) != 0 || shutdown(sv[0], SHUT_WR) != 0)
		return 2;
	struct nccom_abort ab;
	memset(&ab, 0, sizeof ab);
	int32_t rc;
	if (mode == 0) {
		int err = 0;
		rc = nccom_frame_find_abort(sv[1], &ab, &err);
	} else {
		unsigned char hdr[NCCOM_FRAME_HEADER_MAX];
		size_t hl = nccom_frame_header_size();
		ssize_t k = recv(sv[1], hdr, hl, MSG_WAITALL);
		rc = k == (ssize_t)hl ? nccom_frame_check(sv[1], hdr, want, &ab) : 2;
	}
	close(sv[0]);
	close(sv[1]);
	return answer(rc, &ab);
}

int main(void)
{
	/* The framing and socket timeout are the environment's, read once as
	 * a rank does; loopback stands in for the root. */
	nccom_addr lo;
	if (!nccom_parse_addr("127.0.0.1:1", &lo) || nccom_net_init(&lo) != NRT_SUCCESS)
		return 2;
	for (;;) {
		uint32_t hdr[3];
		if (io_all(STDIN_FILENO, hdr, sizeof hdr, 1) != 0)
			return 0;
		if (hdr[0] > 1 || hdr[2] > RECORD_MAX)
			return 2;
		char *in = malloc(hdr[2] + 1u);
		if (in == NULL || io_all(STDIN_FILENO, in, hdr[2], 1) != 0)
			return 2;
		int rc = run(hdr[0], hdr[1], in, hdr[2]);
		free(in);
		if (rc != 0)
			return rc;
	}
}
