/*
 * Leaving a world whose gather failed (docs/bootstrap-hierarchy.md#failure):
 * the failure's one line — the dead neighbour's rank, its address and the
 * phase, or an ABORT already received — goes on as an ABORT on every ring
 * link still alive and the root link, each then shut down, so the ranks
 * beyond hear who failed instead of their neighbour's hang-up, a hop each.
 */
#include <sys/socket.h>

#include "nccom.h"

void nccom_gather_abort(struct nccom_gather *g)
{
	if (g->why[0] == 0)
		return;
	for (int i = 0; i < g->nlinks; i++) {
		struct nccom_link *l = &g->links[i];
		if (l->fd < 0)
			continue;
		if (!l->dead && !nccom_frame_send_abort(l->fd, g->why))
			nccom_info("bootstrap rank %d: the ABORT did not reach %s", g->me, l->name);
		/* The peer sees the end at once; the fd is closed with the bootstrap. */
		(void)shutdown(l->fd, SHUT_RDWR);
		l->dead = true;
	}
	if (g->root_fd >= 0 && !nccom_frame_send_abort(g->root_fd, g->why))
		nccom_info("bootstrap rank %d: the ABORT did not reach %s", g->me, g->root_name);
}
