/*
 * Leaving a world whose gather failed (docs/bootstrap-hierarchy.md#abort-frames):
 * the failure — the dead neighbour's rank, its address, the phase and step,
 * or an abort already received, passed on unchanged — goes on as an abort
 * frame on every ring link still alive (and the extended framing's root
 * link), each then shut down, so the ranks beyond hear who failed instead
 * of their neighbour's hang-up, a hop each.
 */
#include <sys/socket.h>

#include "nccom.h"

void nccom_gather_abort(struct nccom_gather *g)
{
	if (!g->failed)
		return;
	for (int i = 0; i < g->nlinks; i++) {
		struct nccom_link *l = &g->links[i];
		if (l->fd < 0)
			continue;
		if (!l->dead && !nccom_frame_send_abort(l->fd, &g->ab))
			nccom_info("bootstrap rank %d: the ABORT did not reach %s", g->me, l->name);
		/* The peer sees the end at once; the fd is closed with the bootstrap. */
		(void)shutdown(l->fd, SHUT_RDWR);
		l->dead = true;
	}
	/* The extended root turns it into an ABORT to every rank. */
	if (g->root_fd >= 0 && nccom_extended() && !nccom_frame_send_abort(g->root_fd, &g->ab))
		nccom_info("bootstrap rank %d: the ABORT did not reach %s", g->me, g->root_name);
}
