/*
 * nrtabi's extended framing (spec bootstrap_wire.toml, an nrtabi extension,
 * NRTABI_BOOTSTRAP_FRAMING=extended): {u32 type, u32 length} frames, a HELLO
 * opening every rank-to-rank connection, ROOT_WAIT heartbeats, RING_DONE /
 * COMPLETE on a root link kept open, and ABORT carrying the reason a world
 * failed, naming the peer at fault, to every rank. runtime/transport/tcp
 * speaks the same.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "nccom.h"

static const char *msg_name(uint32_t t)
{
	static const char *names[] = {"?", "INFO_TO_ROOT", "INFO_FROM_ROOT", "ROOT_WAIT", "RING_DONE", "COMPLETE", "ABORT", "HELLO", "RING_DATA", "PEER_DATA"};
	return t < sizeof names / sizeof names[0] ? names[t] : "an unknown message";
}

NRT_STATUS nccom_send_msg(int fd, uint32_t type, const void *data, uint32_t len, const char *peer)
{
	struct bootstrap_msg_header h = {.type = type, .length = len};
	nccom_deadline d = nccom_op_deadline();
	NRT_STATUS rc = nccom_xfer(fd, &h, sizeof h, true, peer, d);
	if (rc == NRT_SUCCESS && len > 0)
		rc = nccom_xfer(fd, (void *)(uintptr_t)data, len, true, peer, d);
	return rc;
}

NRT_STATUS nccom_recv_msg(int fd, uint32_t *type, void *buf, uint32_t max, uint32_t *got, const char *peer)
{
	return nccom_recv_msg_by(fd, type, buf, max, got, peer, nccom_op_deadline());
}

static _Thread_local char last_abort[512];

const char *nccom_last_abort(void)
{
	return last_abort;
}

NRT_STATUS nccom_recv_msg_by(int fd, uint32_t *type, void *buf, uint32_t max, uint32_t *got, const char *peer, nccom_deadline d)
{
	struct bootstrap_msg_header h;
	last_abort[0] = '\0';
	NRT_STATUS rc = nccom_xfer(fd, &h, sizeof h, false, peer, d);
	if (rc != NRT_SUCCESS)
		return rc;
	*type = h.type;
	if (h.type == BOOTSTRAP_MSG_ABORT) {
		char text[BOOTSTRAP_ABORT_TEXT_MAX], shown[512];
		if (h.length > BOOTSTRAP_ABORT_TEXT_MAX) {
			nccom_warn("%s sent an ABORT of %u bytes (at most %u): not a bootstrap peer of this release", peer, h.length, BOOTSTRAP_ABORT_TEXT_MAX);
			return NRT_FAILURE;
		}
		if ((rc = nccom_xfer(fd, text, h.length, false, peer, d)) != NRT_SUCCESS)
			return rc;
		/* The reason is the peer's text: escaped, up to the first NUL. */
		nccom_warn("bootstrap aborted by %s: %s", peer, nccom_escape(text, strnlen(text, h.length), shown, sizeof shown));
		snprintf(last_abort, sizeof last_abort, "%s", shown);
		return NRT_FAILURE;
	}
	if (h.length > max) {
		nccom_warn("%s sent a %u-byte %s, more than the %u bytes it may carry", peer, h.length, msg_name(h.type), max);
		return NRT_FAILURE;
	}
	if (got != NULL)
		*got = h.length;
	return h.length > 0 ? nccom_xfer(fd, buf, h.length, false, peer, d) : NRT_SUCCESS;
}

/* ROOT_WAIT heartbeats carry the root past each message's deadline, never
 * past total: a live root (ours or runtime/transport/tcp) answers or aborts
 * within two timeouts and a heartbeat period, so one that only heartbeats
 * until total, whatever counts it reports (a count that moves is as cheap
 * to fake as one that stands still), is not a root worth waiting for
 * (docs/bootstrap.md#bounds-and-tests). */
static NRT_STATUS held(int fd, uint32_t want, const struct bootstrap_root_wait *w, int64_t began, const char *peer)
{
	char addr[80];
	nccom_peer_of(fd, addr, sizeof addr);
	nccom_warn("%s (peer %s) sent ROOT_WAIT (%u of %u) and no %s for %lld s: heartbeats do not extend the wait (%s)",
		   peer, addr, w->have, w->nranks, msg_name(want), (long long)((nccom_now_ms() - began + 500) / 1000), ENV_SOCK_TIMEOUT);
	return NRT_TIMEOUT;
}

NRT_STATUS nccom_recv_want_by(int fd, uint32_t want, void *buf, uint32_t size, const char *peer, nccom_deadline total)
{
	int64_t began = nccom_now_ms();
	struct bootstrap_root_wait w = {0, 0};
	bool heard = false;
	for (;;) {
		uint32_t type = 0, got = 0;
		char wait[sizeof(struct bootstrap_root_wait)];
		void *into = size >= sizeof wait ? buf : wait;
		nccom_deadline d = nccom_op_deadline();
		if (d > total)
			d = total;
		NRT_STATUS rc = nccom_recv_msg_by(fd, &type, into, size >= sizeof wait ? size : sizeof wait, &got, peer, d);
		if (rc != NRT_SUCCESS)
			return heard && nccom_left_ms(total) == 0 ? held(fd, want, &w, began, peer) : rc;
		if (type == BOOTSTRAP_MSG_ROOT_WAIT && want != BOOTSTRAP_MSG_ROOT_WAIT) {
			heard = true;
			if (got == sizeof w)
				memcpy(&w, into, sizeof w);
			if (nccom_left_ms(total) == 0)
				return held(fd, want, &w, began, peer);
			continue;
		}
		if (type != want || got != size) {
			nccom_warn("%s sent a %u-byte %s where %s (%u bytes) was due: the peers disagree on the protocol", peer, got, msg_name(type), msg_name(want), size);
			return NRT_FAILURE;
		}
		if (into != buf && size > 0)
			memcpy(buf, into, size);
		return NRT_SUCCESS;
	}
}

NRT_STATUS nccom_recv_want(int fd, uint32_t want, void *buf, uint32_t size, const char *peer)
{
	return nccom_recv_want_by(fd, want, buf, size, peer, nccom_now_ms() + 3 * (int64_t)nccom_timeout() * 1000);
}

NRT_STATUS nccom_send_hello(int fd, int rank, int nranks, uint32_t channel, const char *peer)
{
	struct bootstrap_peer_hello h = {.sanity = BOOTSTRAP_SANITY, .rank = rank, .nranks = nranks, .channel = channel};
	return nccom_send_msg(fd, BOOTSTRAP_MSG_HELLO, &h, sizeof h, peer);
}

NRT_STATUS nccom_recv_hello(int fd, struct bootstrap_peer_hello *h, const char *peer, nccom_deadline d)
{
	uint32_t type = 0, got = 0;
	memset(h, 0, sizeof *h);
	NRT_STATUS rc = nccom_recv_msg_by(fd, &type, h, sizeof *h, &got, peer, d);
	if (rc == NRT_SUCCESS && (type != BOOTSTRAP_MSG_HELLO || got != sizeof *h)) {
		nccom_warn("%s sent a %u-byte %s where a HELLO (%zu bytes) was due: not a bootstrap peer of this release", peer, got, msg_name(type), sizeof *h);
		return NRT_FAILURE;
	}
	if (rc == NRT_SUCCESS && h->sanity != BOOTSTRAP_SANITY) {
		nccom_warn("%s sent a HELLO with sanity magic %#08x, expected %#08x: not a bootstrap peer of this release", peer, h->sanity, BOOTSTRAP_SANITY);
		return NRT_FAILURE;
	}
	return rc;
}

NRT_STATUS nccom_send_data(int fd, uint32_t type, const void *data, int size, const char *peer)
{
	if (nccom_extended())
		return nccom_send_msg(fd, type, data, (uint32_t)size, peer);
	return nccom_send_frame(fd, data, size, peer);
}

NRT_STATUS nccom_recv_data(int fd, uint32_t type, void *data, int size, const char *peer)
{
	if (nccom_extended())
		return nccom_recv_want(fd, type, data, (uint32_t)size, peer);
	int got = 0;
	NRT_STATUS rc = nccom_recv_frame(fd, data, size, &got, peer);
	if (rc == NRT_SUCCESS && got != size) {
		nccom_warn("%s sent a %d-byte %s where %d bytes were due: the peers disagree on the message size", peer, got, msg_name(type), size);
		return NRT_FAILURE;
	}
	return rc;
}
