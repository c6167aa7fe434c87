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

NRT_STATUS nccom_recv_msg_by(int fd, uint32_t *type, void *buf, uint32_t max, uint32_t *got, const char *peer, nccom_deadline d)
{
	struct bootstrap_msg_header h;
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

/* The frame header a ring step's data goes in, by framing. */
static size_t step_header(uint32_t len, unsigned char *out)
{
	if (nccom_extended()) {
		struct bootstrap_msg_header h = {.type = BOOTSTRAP_MSG_RING_DATA, .length = len};
		memcpy(out, &h, sizeof h);
		return sizeof h;
	}
	struct bootstrap_frame_size f = {.size = (int)len};
	memcpy(out, &f, sizeof f);
	return sizeof f;
}

/* Whether a received step header announces exactly want bytes of ring data.
 * An ABORT (a predecessor passing on why its handshake failed,
 * docs/bootstrap-hierarchy.md) is read and logged, escaped, with its sender. */
static bool step_header_ok(int fd, const unsigned char *hdr, int want, const char *peer)
{
	if (nccom_extended()) {
		struct bootstrap_msg_header h;
		memcpy(&h, hdr, sizeof h);
		if (h.type == BOOTSTRAP_MSG_RING_DATA && h.length == (uint32_t)want)
			return true;
		if (h.type == BOOTSTRAP_MSG_ABORT && h.length <= BOOTSTRAP_ABORT_TEXT_MAX) {
			char text[BOOTSTRAP_ABORT_TEXT_MAX], shown[512];
			if (nccom_xfer(fd, text, h.length, false, peer, nccom_op_deadline()) == NRT_SUCCESS)
				nccom_warn("bootstrap aborted by %s: %s", peer, nccom_escape(text, strnlen(text, h.length), shown, sizeof shown));
			return false;
		}
		nccom_warn("%s sent a %u-byte %s where RING_DATA (%d bytes) was due: the peers disagree on the protocol", peer, h.length, msg_name(h.type), want);
		return false;
	}
	struct bootstrap_frame_size f;
	memcpy(&f, hdr, sizeof f);
	if (f.size == want)
		return true;
	nccom_warn("%s sent a %d-byte frame where %d bytes were due: the peers disagree on the message size", peer, f.size, want);
	return false;
}

/* One side of a ring step: header then data, done counts both. */
struct step_side {
	int fd;
	unsigned char hdr[8];
	size_t hl, done, total;
	char *data;
	const char *name;
	char addr[80];
};

static void step_where(const struct step_side *s, char *out, size_t n)
{
	if (strstr(s->name, s->addr) != NULL || strcmp(s->addr, "?") == 0)
		snprintf(out, n, "%s", s->name);
	else
		snprintf(out, n, "%s (peer %s)", s->name, s->addr);
}

/* Move what the socket takes now; false on a failure already logged. */
static bool step_io(struct step_side *s, bool send_dir, int want, bool *hdr_ok)
{
	bool in_hdr = s->done < s->hl;
	char *p = in_hdr ? (char *)s->hdr + s->done : s->data + (s->done - s->hl);
	size_t n = in_hdr ? s->hl - s->done : s->total - s->done;
	ssize_t k = send_dir ? send(s->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(s->fd, p, n, MSG_DONTWAIT);
	char where[200];
	if (k == 0 && !send_dir) {
		step_where(s, where, sizeof where);
		nccom_warn("%s (%s)", NRTABI_MSG_NCCOM_CONNECTION_CLOSED, where);
		return false;
	}
	if (k < 0) {
		int e = errno;
		if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK)
			return true;
		step_where(s, where, sizeof where);
		nccom_warn("Call to %s %s failed : %s", send_dir ? "send to" : "recv from", where, strerror(e));
		return false;
	}
	s->done += (size_t)k;
	if (!send_dir && !*hdr_ok && s->done == s->hl) {
		step_where(s, where, sizeof where);
		if (!step_header_ok(s->fd, s->hdr, want, where))
			return false;
		*hdr_ok = true;
		s->total = s->hl + (size_t)want;
	}
	return true;
}

NRT_STATUS nccom_ring_step(int sfd, const void *out, int out_len, const char *next, int rfd, void *in, int in_len, const char *prev)
{
	struct step_side s = {.fd = sfd, .data = (char *)(uintptr_t)out, .name = next};
	struct step_side r = {.fd = rfd, .data = in, .name = prev};
	s.hl = step_header((uint32_t)out_len, s.hdr);
	s.total = s.hl + (size_t)out_len;
	r.hl = s.hl;
	r.total = r.hl; /* the data's length once the header is checked */
	nccom_peer_of(sfd, s.addr, sizeof s.addr);
	nccom_peer_of(rfd, r.addr, sizeof r.addr);
	bool hdr_ok = false;
	nccom_deadline d = nccom_op_deadline();
	while (s.done < s.total || r.done < r.total) {
		struct pollfd p[2];
		int np = 0, si = -1, ri = -1;
		if (s.done < s.total) {
			si = np;
			p[np++] = (struct pollfd){.fd = sfd, .events = POLLOUT};
		}
		if (r.done < r.total) {
			ri = np;
			p[np++] = (struct pollfd){.fd = rfd, .events = POLLIN};
		}
		int left = nccom_left_ms(d);
		int w = left > 0 ? poll(p, (nfds_t)np, left) : 0;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			nccom_warn("poll on %s / %s: %s", next, prev, strerror(errno));
			return NRT_FAILURE;
		}
		if (w == 0 && nccom_left_ms(d) == 0) {
			/* Whichever side is not done names the peer that stalled. */
			struct step_side *late = r.done < r.total ? &r : &s;
			char where[200];
			step_where(late, where, sizeof where);
			nccom_warn(NCCOM_MSG_DEADLINE ": %zu of %zu bytes", late == &r ? "receiving from" : "sending to", where, nccom_timeout(),
				   late->done, late == &r && !hdr_ok ? r.hl + (size_t)in_len : late->total);
			return NRT_TIMEOUT;
		}
		if (si >= 0 && p[si].revents != 0 && !step_io(&s, true, out_len, &hdr_ok))
			return NRT_FAILURE;
		if (ri >= 0 && p[ri].revents != 0 && !step_io(&r, false, in_len, &hdr_ok))
			return NRT_FAILURE;
	}
	return NRT_SUCCESS;
}
