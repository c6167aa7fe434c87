/*
 * One step of a bootstrap all-gather over this rank's ring links
 * (docs/bootstrap-hierarchy.md#abort-frames): every link of the rank is polled at
 * once, those that move data this step and those that only wait, so a
 * neighbour's EOF or reset is seen the moment it happens whatever this rank
 * is waiting on, and named with the neighbour's rank, its address and the
 * phase. An ABORT arriving on any link (or from the root, in the extended
 * framing) fails the step with its text, which the caller passes on
 * (abort.c): the failure floods every ring instead of each rank waiting out
 * its timeout. The frames are the framing's ring data (frame.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "nccom.h"

/* One direction of one link in this step: header, then data. */
struct side {
	bool on;
	unsigned char hdr[NCCOM_FRAME_HEADER_MAX];
	size_t hl, done, total;
	char *data;
	bool hdr_ok;
};

void nccom_link_where(const struct nccom_link *l, char *out, size_t n)
{
	if (l->addr[0] == 0 || strstr(l->name, l->addr) != NULL)
		snprintf(out, n, "%s", l->name);
	else
		snprintf(out, n, "%s (peer %s)", l->name, l->addr);
}

void nccom_link_wired(struct nccom_link *l, int fd, int rank, const char *name)
{
	l->rank = rank;
	snprintf(l->name, sizeof l->name, "%s", name);
	nccom_peer_of(fd, l->addr, sizeof l->addr);
	if (strcmp(l->addr, "?") == 0)
		l->addr[0] = 0;
	nccom_addr a;
	socklen_t len = sizeof a;
	memset(&a, 0, sizeof a);
	if (getpeername(fd, &a.sa, &len) != 0)
		memset(&a, 0, sizeof a);
	memcpy(&l->sa, &a, sizeof l->sa);
}

NRT_STATUS nccom_gather_fault(struct nccom_gather *g, struct nccom_link *l, const char *fmt, ...)
{
	char what[512], who[128] = "this rank", where[200] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	struct bootstrap_abort_info *in = &g->ab.info;
	memset(in, 0, sizeof *in);
	in->sanity = BOOTSTRAP_SANITY;
	in->dead_rank = -1;
	in->reporter = g->me;
	in->phase = g->ring_phase;
	in->step = g->step;
	if (l != NULL) {
		l->dead = true;
		in->dead_rank = l->rank;
		/* Its listen address once the world knows it, else the connection's. */
		static const nccl_socket_address_t none;
		bool known = g->listen != NULL && l->rank >= 0 && memcmp(&g->listen[l->rank], &none, sizeof none) != 0;
		in->dead_addr = known ? g->listen[l->rank] : l->sa;
		nccom_addr a;
		memcpy(&a, &in->dead_addr, sizeof a);
		char text[80];
		nccom_format_addr(&a, text, sizeof text);
		snprintf(who, sizeof who, "rank %d (%s)", l->rank, text);
		nccom_link_where(l, where, sizeof where);
	}
	int k = snprintf(g->ab.text, sizeof g->ab.text, "%s %s in the %s, step %d, during %s, as rank %d saw it%s%s", who, what,
			 nccom_phase_name(g->ring_phase), g->step, g->phase, g->me, where[0] ? " on its " : "", where);
	g->ab.len = k < 0 ? 0 : (uint32_t)strnlen(g->ab.text, BOOTSTRAP_ABORT_TEXT_MAX);
	g->failed = true;
	g->forward = false;
	nccom_warn("bootstrap rank %d: %s", g->me, g->ab.text);
	return NRT_FAILURE;
}

static NRT_STATUS hung_up(struct nccom_gather *g, struct nccom_link *l, const char *what)
{
	return nccom_gather_fault(g, l, "went (%s)", what);
}

NRT_STATUS nccom_gather_aborted(struct nccom_gather *g, struct nccom_link *l, const struct nccom_abort *ab)
{
	char where[200], shown[NCCOM_ESCAPED_SIZE(BOOTSTRAP_ABORT_TEXT_MAX)];
	nccom_link_where(l, where, sizeof where);
	l->dead = true; /* it is going: nothing is sent back on it */
	g->ab = *ab;
	g->failed = g->forward = true;
	nccom_escape(ab->text, ab->len, shown, sizeof shown);
	if (nccom_extended() && g->step < 0) {
		nccom_warn("bootstrap aborted by %s during %s, as rank %d heard it: %s", where, g->phase, g->me, shown);
		return NRT_FAILURE;
	}
	if (nccom_extended()) {
		nccom_warn("bootstrap aborted by %s in the %s, step %d, during %s, as rank %d heard it: %s", where, nccom_phase_name(g->ring_phase), g->step,
			   g->phase, g->me, shown);
		return NRT_FAILURE;
	}
	nccom_addr a;
	char text[80], dead[120] = "an unknown rank";
	memcpy(&a, &ab->info.dead_addr, sizeof a);
	nccom_format_addr(&a, text, sizeof text);
	if (ab->info.dead_rank >= 0)
		snprintf(dead, sizeof dead, "rank %d (%s)", ab->info.dead_rank, text);
	nccom_warn("bootstrap rank %d: aborted by rank %d (abort frame from %s): %s went in the %s, step %d: %s", g->me, ab->info.reporter, where,
		   dead, nccom_phase_name(ab->info.phase), ab->info.step, shown);
	return NRT_FAILURE;
}

/* A link that was not due to deliver has something: the peer hung up or
 * reset, or told why it is going (an abort, possibly behind data of a step
 * it was ahead on). Its pending bytes are read to find out; the gather
 * fails either way. */
static NRT_STATUS unexpected(struct nccom_gather *g, struct nccom_link *l)
{
	struct nccom_abort ab;
	int e = 0;
	int got = nccom_frame_find_abort(l->fd, &ab, &e);
	if (got > 0)
		return nccom_gather_aborted(g, l, &ab);
	if (got == 0)
		return hung_up(g, l, e != 0 ? strerror(e) : NRTABI_MSG_NCCOM_CONNECTION_CLOSED);
	char shown[NCCOM_ESCAPED_SIZE(80)];
	return nccom_gather_fault(g, l, "sent what was not due (%s): the peers disagree on the protocol",
				  nccom_escape(ab.text, strnlen(ab.text, 80), shown, sizeof shown));
}

/* Move what the socket takes now on one side. */
static NRT_STATUS io(struct nccom_gather *g, struct nccom_link *l, struct side *s, bool send_dir, size_t want)
{
	bool in_hdr = s->done < s->hl;
	char *p = in_hdr ? (char *)s->hdr + s->done : s->data + (s->done - s->hl);
	size_t n = in_hdr ? s->hl - s->done : s->total - s->done;
	ssize_t k = send_dir ? send(l->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(l->fd, p, n, MSG_DONTWAIT);
	if (k == 0 && !send_dir)
		return hung_up(g, l, NRTABI_MSG_NCCOM_CONNECTION_CLOSED);
	if (k < 0) {
		int e = errno;
		if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK)
			return NRT_SUCCESS;
		/* A reset peer may have said why first. */
		if (send_dir && (e == EPIPE || e == ECONNRESET))
			return unexpected(g, l);
		return hung_up(g, l, strerror(e));
	}
	s->done += (size_t)k;
	if (!send_dir && !s->hdr_ok && s->done == s->hl) {
		struct nccom_abort ab;
		int v = nccom_frame_check(l->fd, s->hdr, want, &ab);
		if (v > 0)
			return nccom_gather_aborted(g, l, &ab);
		if (v < 0) {
			char shown[NCCOM_ESCAPED_SIZE(120)];
			return nccom_gather_fault(g, l, "sent %s: the peers disagree on the protocol", nccom_escape(ab.text, strnlen(ab.text, 120), shown, sizeof shown));
		}
		s->hdr_ok = true;
		s->total = s->hl + want;
	}
	return NRT_SUCCESS;
}

/* A message on the root link during a gather (extended framing): a
 * heartbeat is passed over, an ABORT (logged by nccom_recv_msg) or a hang-up
 * fails the gather with the root's reason. */
static NRT_STATUS from_root(struct nccom_gather *g)
{
	uint32_t type = 0, got = 0;
	struct bootstrap_root_wait w;
	NRT_STATUS rc = nccom_recv_msg(g->root_fd, &type, &w, sizeof w, &got, g->root_name);
	if (rc == NRT_SUCCESS && type == BOOTSTRAP_MSG_ROOT_WAIT)
		return NRT_SUCCESS;
	if (type == BOOTSTRAP_MSG_ABORT && nccom_last_abort()[0] != '\0')
		return nccom_gather_fault(g, NULL, "heard %s end the world: %s", g->root_name, nccom_last_abort());
	return nccom_gather_fault(g, NULL, "heard %s end the world (see the root's log)", g->root_name);
}

/* A frame this rank had begun to send when the step failed is finished
 * (briefly) before the ABORT goes on that link, or the link is marked torn
 * and the ABORT is not sent: bytes of an ABORT inside a half-sent frame
 * would be read as ring data. */
static void finish_sends(struct nccom_gather *g, struct side *s)
{
	for (int i = 0; i < g->nlinks; i++) {
		struct nccom_link *l = &g->links[i];
		if (l->fd < 0 || l->dead || !s[i].on || s[i].done == 0 || s[i].done == s[i].total)
			continue;
		nccom_deadline d = nccom_now_ms() + NCCOM_ABORT_WAIT_MS;
		while (s[i].done < s[i].total) {
			bool in_hdr = s[i].done < s[i].hl;
			char *p = in_hdr ? (char *)s[i].hdr + s[i].done : s[i].data + (s[i].done - s[i].hl);
			size_t n = in_hdr ? s[i].hl - s[i].done : s[i].total - s[i].done;
			ssize_t k = send(l->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k > 0) {
				s[i].done += (size_t)k;
				continue;
			}
			struct pollfd q = {.fd = l->fd, .events = POLLOUT};
			int left = nccom_left_ms(d);
			if ((k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || left == 0 ||
			    (poll(&q, 1, left) < 0 && errno != EINTR)) {
				l->dead = true; /* torn: no ABORT on it */
				break;
			}
		}
	}
}

static NRT_STATUS run(struct nccom_gather *g, const struct nccom_move *mv, struct side *s, struct side *r);

NRT_STATUS nccom_step(struct nccom_gather *g, const struct nccom_move *mv)
{
	struct side s[NCCOM_MAX_LINKS], r[NCCOM_MAX_LINKS];
	memset(s, 0, sizeof s);
	memset(r, 0, sizeof r);
	NRT_STATUS rc = run(g, mv, s, r);
	if (rc != NRT_SUCCESS)
		finish_sends(g, s);
	return rc;
}

static NRT_STATUS run(struct nccom_gather *g, const struct nccom_move *mv, struct side *s, struct side *r)
{
	for (int i = 0; i < g->nlinks; i++) {
		if (mv[i].send) {
			s[i].on = true;
			s[i].hl = nccom_frame_header(mv[i].out_len, s[i].hdr);
			s[i].total = s[i].hl + mv[i].out_len;
			s[i].data = (char *)(uintptr_t)mv[i].out;
		}
		if (mv[i].recv) {
			r[i].on = true;
			r[i].hl = r[i].total = nccom_frame_header_size();
			r[i].data = mv[i].in;
		}
	}
	nccom_deadline d = nccom_op_deadline();
	for (;;) {
		struct pollfd p[NCCOM_MAX_LINKS + 1];
		int at[NCCOM_MAX_LINKS + 1], np = 0;
		bool busy = false;
		for (int i = 0; i < g->nlinks; i++) {
			const struct nccom_link *l = &g->links[i];
			bool sp = s[i].on && s[i].done < s[i].total, rp = r[i].on && r[i].done < r[i].total;
			busy |= sp || rp;
			short ev = (short)((sp ? POLLOUT : 0) | (rp ? POLLIN : 0));
			if (!rp && (mv[i].watch || sp))
				ev |= POLLRDHUP;
			if (l->fd < 0 || ev == 0)
				continue;
			at[np] = i;
			p[np++] = (struct pollfd){.fd = l->fd, .events = ev};
		}
		if (!busy)
			return NRT_SUCCESS;
		if (g->root_fd >= 0) {
			at[np] = -1;
			p[np++] = (struct pollfd){.fd = g->root_fd, .events = POLLIN};
		}
		int left = nccom_left_ms(d);
		int w = left > 0 ? poll(p, (nfds_t)np, left) : 0;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return nccom_gather_fault(g, NULL, "could not poll its ring links (%s)", strerror(errno));
		if (w == 0) {
			/* The first link not done names the peer that stalled. */
			for (int i = 0; i < g->nlinks; i++) {
				bool rp = r[i].on && r[i].done < r[i].total;
				if (!rp && !(s[i].on && s[i].done < s[i].total))
					continue;
				(void)nccom_gather_fault(g, &g->links[i], "did not %s within %d s (%s, a total deadline)",
							 rp ? "deliver its ring data" : "take this rank's ring data", nccom_timeout(), ENV_SOCK_TIMEOUT);
				g->links[i].dead = false; /* it may still read the abort */
				return NRT_TIMEOUT;
			}
			return NRT_TIMEOUT;
		}
		for (int k = 0; k < np; k++) {
			short re = p[k].revents;
			if (re == 0)
				continue;
			if (at[k] < 0) {
				NRT_STATUS rc = from_root(g);
				if (rc != NRT_SUCCESS)
					return rc;
				continue;
			}
			int i = at[k];
			struct nccom_link *l = &g->links[i];
			bool sp = s[i].on && s[i].done < s[i].total, rp = r[i].on && r[i].done < r[i].total;
			NRT_STATUS rc = NRT_SUCCESS;
			if (rp && (re & (POLLIN | POLLHUP | POLLERR | POLLRDHUP)))
				rc = io(g, l, &r[i], false, mv[i].in_len);
			else if (!rp && (sp || mv[i].watch) && (re & (POLLRDHUP | POLLHUP | POLLERR)))
				rc = unexpected(g, l); /* a waiting link, or one only sent on */
			if (rc == NRT_SUCCESS && sp && !l->dead && (re & (POLLOUT | POLLERR)))
				rc = io(g, l, &s[i], true, mv[i].out_len);
			if (rc != NRT_SUCCESS)
				return rc;
		}
	}
}
