/*
 * One step of a bootstrap all-gather over this rank's ring links
 * (docs/bootstrap-hierarchy.md#failure): every link of the rank is polled at
 * once, those that move data this step and those that only wait, so a
 * neighbour's EOF or reset is seen the moment it happens whatever this rank
 * is waiting on, and named with the neighbour's rank, its address and the
 * phase. An ABORT arriving on any link (or from the root, in the extended
 * framing) fails the step with its text, which the caller passes on
 * (abort.c): the failure floods every ring instead of each rank waiting out
 * its timeout. The frames are the framing's ring data (frame.c).
 */
#include <errno.h>
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

/* The failure's one line: logged here, kept in g->why for the ABORT. */
static NRT_STATUS hung_up(struct nccom_gather *g, struct nccom_link *l, const char *step, const char *what)
{
	char where[200];
	nccom_link_where(l, where, sizeof where);
	l->dead = true;
	snprintf(g->why, sizeof g->why, "%s of rank %d hung up during %s, %s: %s", where, g->me, g->phase, step, what);
	nccom_warn("bootstrap rank %d: %s", g->me, g->why);
	return NRT_FAILURE;
}

/* A link that was not due to deliver has something: the peer hung up or
 * reset, or told why it is going (an ABORT, possibly behind data of a step
 * it was ahead on). Its pending bytes are read to find out; the gather
 * fails either way. */
static NRT_STATUS unexpected(struct nccom_gather *g, struct nccom_link *l, const char *step)
{
	char text[BOOTSTRAP_ABORT_TEXT_MAX + 1];
	int e = 0;
	int got = nccom_frame_find_abort(l->fd, text, sizeof text, &e);
	if (got > 0)
		return nccom_gather_aborted(g, l, step, text);
	if (got == 0)
		return hung_up(g, l, step, e != 0 ? strerror(e) : NRTABI_MSG_NCCOM_CONNECTION_CLOSED);
	char where[200];
	nccom_link_where(l, where, sizeof where);
	char shown[NCCOM_ESCAPED_SIZE(64)];
	snprintf(g->why, sizeof g->why, "%s of rank %d sent what was not due during %s, %s (%s): the peers disagree on the protocol", where, g->me,
		 g->phase, step, nccom_escape(text, strnlen(text, 64), shown, sizeof shown));
	nccom_warn("bootstrap rank %d: %s", g->me, g->why);
	return NRT_FAILURE;
}

NRT_STATUS nccom_gather_aborted(struct nccom_gather *g, struct nccom_link *l, const char *step, const char *text)
{
	char where[200], shown[NCCOM_ESCAPED_SIZE(BOOTSTRAP_ABORT_TEXT_MAX)];
	nccom_link_where(l, where, sizeof where);
	l->dead = true; /* it is going: nothing is sent back on it */
	snprintf(g->why, sizeof g->why, "%s", text);
	nccom_warn("bootstrap rank %d: aborted by %s during %s, %s: %s", g->me, where, g->phase, step,
		   nccom_escape(text, strnlen(text, BOOTSTRAP_ABORT_TEXT_MAX), shown, sizeof shown));
	return NRT_FAILURE;
}

/* Move what the socket takes now on one side. */
static NRT_STATUS io(struct nccom_gather *g, struct nccom_link *l, struct side *s, bool send_dir, size_t want, const char *step)
{
	bool in_hdr = s->done < s->hl;
	char *p = in_hdr ? (char *)s->hdr + s->done : s->data + (s->done - s->hl);
	size_t n = in_hdr ? s->hl - s->done : s->total - s->done;
	ssize_t k = send_dir ? send(l->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(l->fd, p, n, MSG_DONTWAIT);
	if (k == 0 && !send_dir)
		return hung_up(g, l, step, NRTABI_MSG_NCCOM_CONNECTION_CLOSED);
	if (k < 0) {
		int e = errno;
		if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK)
			return NRT_SUCCESS;
		/* A reset peer may have said why first. */
		if (send_dir && (e == EPIPE || e == ECONNRESET))
			return unexpected(g, l, step);
		return hung_up(g, l, step, strerror(e));
	}
	s->done += (size_t)k;
	if (!send_dir && !s->hdr_ok && s->done == s->hl) {
		char text[BOOTSTRAP_ABORT_TEXT_MAX + 1];
		int v = nccom_frame_check(l->fd, s->hdr, want, text, sizeof text);
		if (v > 0)
			return nccom_gather_aborted(g, l, step, text);
		if (v < 0) {
			char where[200];
			nccom_link_where(l, where, sizeof where);
			snprintf(g->why, sizeof g->why, "%s of rank %d sent a frame other than the %zu bytes of ring data due during %s, %s: the peers disagree on the protocol",
				 where, g->me, want, g->phase, step);
			nccom_warn("bootstrap rank %d: %s", g->me, g->why);
			return NRT_FAILURE;
		}
		s->hdr_ok = true;
		s->total = s->hl + want;
	}
	return NRT_SUCCESS;
}

/* A message on the root link during a gather (extended framing): a
 * heartbeat is passed over, an ABORT (logged by nccom_recv_msg) or a hang-up
 * fails the gather with the root's reason. */
static NRT_STATUS from_root(struct nccom_gather *g, const char *step)
{
	uint32_t type = 0, got = 0;
	struct bootstrap_root_wait w;
	NRT_STATUS rc = nccom_recv_msg(g->root_fd, &type, &w, sizeof w, &got, g->root_name);
	if (rc == NRT_SUCCESS && type == BOOTSTRAP_MSG_ROOT_WAIT)
		return NRT_SUCCESS;
	snprintf(g->why, sizeof g->why, "%s ended the world during %s, %s, as rank %d heard it (see that rank's log)", g->root_name, g->phase, step, g->me);
	nccom_warn("bootstrap rank %d: %s", g->me, g->why);
	return NRT_FAILURE;
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

static NRT_STATUS run(struct nccom_gather *g, const struct nccom_move *mv, const char *step, struct side *s, struct side *r);

NRT_STATUS nccom_step(struct nccom_gather *g, const struct nccom_move *mv, const char *step)
{
	struct side s[NCCOM_MAX_LINKS], r[NCCOM_MAX_LINKS];
	memset(s, 0, sizeof s);
	memset(r, 0, sizeof r);
	NRT_STATUS rc = run(g, mv, step, s, r);
	if (rc != NRT_SUCCESS)
		finish_sends(g, s);
	return rc;
}

static NRT_STATUS run(struct nccom_gather *g, const struct nccom_move *mv, const char *step, struct side *s, struct side *r)
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
		if (w < 0) {
			snprintf(g->why, sizeof g->why, "rank %d: poll during %s, %s: %s", g->me, g->phase, step, strerror(errno));
			nccom_warn("bootstrap %s", g->why);
			return NRT_FAILURE;
		}
		if (w == 0) {
			/* The first link not done names the peer that stalled. */
			for (int i = 0; i < g->nlinks; i++) {
				bool rp = r[i].on && r[i].done < r[i].total;
				if (!rp && !(s[i].on && s[i].done < s[i].total))
					continue;
				char where[200];
				nccom_link_where(&g->links[i], where, sizeof where);
				snprintf(g->why, sizeof g->why, "%s of rank %d did not %s within %d s (%s, a total deadline) during %s, %s", where, g->me,
					 rp ? "deliver its ring data" : "take this rank's ring data", nccom_timeout(), ENV_SOCK_TIMEOUT, g->phase, step);
				nccom_warn("bootstrap rank %d: %s", g->me, g->why);
				return NRT_TIMEOUT;
			}
			return NRT_TIMEOUT;
		}
		for (int k = 0; k < np; k++) {
			short re = p[k].revents;
			if (re == 0)
				continue;
			if (at[k] < 0) {
				NRT_STATUS rc = from_root(g, step);
				if (rc != NRT_SUCCESS)
					return rc;
				continue;
			}
			int i = at[k];
			struct nccom_link *l = &g->links[i];
			bool sp = s[i].on && s[i].done < s[i].total, rp = r[i].on && r[i].done < r[i].total;
			NRT_STATUS rc = NRT_SUCCESS;
			if (rp && (re & (POLLIN | POLLHUP | POLLERR | POLLRDHUP)))
				rc = io(g, l, &r[i], false, mv[i].in_len, step);
			else if (!rp && (sp || mv[i].watch) && (re & (POLLRDHUP | POLLHUP | POLLERR)))
				rc = unexpected(g, l, step); /* a waiting link, or one only sent on */
			if (rc == NRT_SUCCESS && sp && !l->dead && (re & (POLLOUT | POLLERR)))
				rc = io(g, l, &s[i], true, mv[i].out_len, step);
			if (rc != NRT_SUCCESS)
				return rc;
		}
	}
}
