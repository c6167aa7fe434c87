/*
 * Leaving a world whose gather failed (docs/bootstrap-hierarchy.md#abort-frames):
 * the failure — the dead neighbour's rank, its address, the phase and step,
 * or an abort already received, passed on unchanged — goes on as an abort
 * frame on every ring link still alive (and the extended framing's root
 * link), each then shut down, so the ranks beyond hear who failed instead
 * of their neighbour's hang-up, a hop each.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "nccom.h"

/* What the neighbours still send is read and dropped until each hangs up
 * (it has read the abort and gone) or NCCOM_ABORT_WAIT_MS pass: closing
 * over unread bytes would reset the connection, and a neighbour still
 * writing would then see a reset, not the abort, and blame this rank. */
static void linger(struct nccom_gather *g)
{
	nccom_deadline d = nccom_now_ms() + NCCOM_ABORT_WAIT_MS;
	bool open[NCCOM_MAX_LINKS];
	for (int i = 0; i < g->nlinks; i++)
		open[i] = g->links[i].fd >= 0;
	for (;;) {
		struct pollfd p[NCCOM_MAX_LINKS];
		int at[NCCOM_MAX_LINKS], np = 0;
		for (int i = 0; i < g->nlinks; i++)
			if (open[i]) {
				at[np] = i;
				p[np++] = (struct pollfd){.fd = g->links[i].fd, .events = POLLIN};
			}
		int left = nccom_left_ms(d);
		if (np == 0 || left == 0)
			return;
		int w = poll(p, (nfds_t)np, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		for (int k = 0; k < np; k++) {
			if (p[k].revents == 0)
				continue;
			char sink[4096];
			ssize_t n = recv(p[k].fd, sink, sizeof sink, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
				open[at[k]] = false;
		}
	}
}

void nccom_gather_abort(struct nccom_gather *g)
{
	if (!g->failed)
		return;
	for (int i = 0; i < g->nlinks; i++) {
		struct nccom_link *l = &g->links[i];
		if (l->fd < 0)
			continue;
		if (!l->dead && !nccom_frame_send_abort(l->fd, &g->ab))
			nccom_info("bootstrap rank %d: the abort did not reach %s", g->me, l->name);
		/* A FIN after the abort: the peer sees the end at once. */
		(void)shutdown(l->fd, SHUT_WR);
	}
	linger(g);
	/* The extended root turns it into an ABORT to every rank. */
	if (g->root_fd >= 0 && nccom_extended() && !nccom_frame_send_abort(g->root_fd, &g->ab))
		nccom_info("bootstrap rank %d: the ABORT did not reach %s", g->me, g->root_name);
}
