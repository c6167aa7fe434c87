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

int nccom_links_poll(const struct nccom_link *links, int n, nccom_deadline d, int (*ready)(void *arg, int fd), void *arg)
{
	bool open[NCCOM_MAX_LINKS];
	for (int i = 0; i < n; i++)
		open[i] = links[i].fd >= 0;
	for (;;) {
		struct pollfd p[NCCOM_MAX_LINKS];
		int at[NCCOM_MAX_LINKS], np = 0;
		for (int i = 0; i < n; i++)
			if (open[i]) {
				at[np] = i;
				p[np++] = (struct pollfd){.fd = links[i].fd, .events = POLLIN};
			}
		int left = nccom_left_ms(d);
		if (np == 0 || left == 0)
			return -1;
		int w = poll(p, (nfds_t)np, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		for (int k = 0; k < np; k++) {
			if (p[k].revents == 0)
				continue;
			switch (ready(arg, p[k].fd)) {
			case NCCOM_LINK_STOP:
				return at[k];
			case NCCOM_LINK_DROP:
				open[at[k]] = false;
				break;
			default:
				break;
			}
		}
	}
}

/* A neighbour's bytes read and dropped: NCCOM_LINK_DROP once it has hung
 * up or failed. */
static int drain(void *arg, int fd)
{
	(void)arg;
	char sink[4096];
	ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		return NCCOM_LINK_DROP;
	return NCCOM_LINK_KEEP;
}

/* What the neighbours still send is read and dropped until each hangs up
 * (it has read the abort and gone) or NCCOM_ABORT_WAIT_MS pass: closing
 * over unread bytes would reset the connection, and a neighbour still
 * writing would then see a reset, not the abort, and blame this rank. */
static void linger(struct nccom_gather *g)
{
	(void)nccom_links_poll(g->links, g->nlinks, nccom_now_ms() + NCCOM_ABORT_WAIT_MS, drain, NULL);
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
