/*
 * A point-to-point send or receive that fails after the gather
 * (docs/bootstrap-hierarchy.md#abort-frames): the ranks that only wait for
 * the world's next step would otherwise sit out their socket timeout. What
 * ended the transfer decides what the world hears:
 *  - the peer closed or reset the connection, with no abort on it, before
 *    this rank's own deadline, and no abort came round the ring within
 *    NCCOM_HANG_UP_GRACE_MS: the peer is named dead, with its listen
 *    address and BOOTSTRAP_PHASE_PEER. A rank that fails for any reason tells
 *    its point-to-point peers first (below), so a hang-up without a word is
 *    a death, not a live rank that gave up;
 *  - an abort read on the connection: passed on unchanged;
 *  - this rank's own wait ran out: it names no rank dead (the rank it waited
 *    for may be alive, waiting on another) and says that it timed out.
 * The abort goes on every ring link and every point-to-point connection of
 * the bootstrap, once; the caller holds ring_mu with b->ring's fds fresh.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "nccom.h"

/* The abort on every open point-to-point connection but skip, a FIN after
 * it, then what the peers still send is read and dropped until each hangs up
 * or NCCOM_ABORT_WAIT_MS pass: closing over unread bytes would reset the
 * connection under a peer that has not read the abort yet, and it would
 * take this rank for the dead one. */
void nccom_tell_peers(struct nccom_bootstrap *b, const struct nccom_abort *ab, int skip)
{
	if (nccom_fault("deaf-after-gather"))
		return;
	int n = b->st.nranks;
	for (int r = 0; r < n; r++) {
		int fds[2] = {b->st.peerCommSendFd[r], b->st.peerCommRecvFd[r]};
		for (int k = 0; k < 2; k++) {
			if (fds[k] < 0 || fds[k] == skip)
				continue;
			if (!nccom_frame_send_abort(fds[k], ab))
				nccom_info("bootstrap rank %d: the abort did not reach rank %d's point-to-point connection", b->st.rank, r);
			(void)shutdown(fds[k], SHUT_WR);
		}
	}
	nccom_deadline d = nccom_now_ms() + NCCOM_ABORT_WAIT_MS;
	for (int r = 0; r < n; r++) {
		int fds[2] = {b->st.peerCommSendFd[r], b->st.peerCommRecvFd[r]};
		for (int k = 0; k < 2; k++) {
			if (fds[k] < 0 || fds[k] == skip)
				continue;
			for (;;) {
				char sink[4096];
				ssize_t got = recv(fds[k], sink, sizeof sink, MSG_DONTWAIT);
				if (got > 0)
					continue;
				if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
					break;
				struct pollfd q = {.fd = fds[k], .events = POLLIN};
				int left = nccom_left_ms(d);
				if (left == 0 || (poll(&q, 1, left) < 0 && errno != EINTR))
					break;
			}
		}
	}
}

/* An abort read from a link: NCCOM_LINK_STOP with it in the nccom_abort
 * arg points at; any other input (the link ended, or data) leaves nothing
 * more to hear there. */
static int abort_on(void *arg, int fd)
{
	int e = 0;
	return nccom_frame_find_abort(fd, arg, &e) > 0 ? NCCOM_LINK_STOP : NCCOM_LINK_DROP;
}

/* A point-to-point peer that hung up with no abort on the connection may
 * have left because the world failed elsewhere (a rank that learnt of
 * another's death from its ring tells its ring links, and a peer still
 * dialling it, or one it never wrote to, hears only the hang-up); its abort
 * comes round the ring. So this rank reads its ring links for an abort up
 * to NCCOM_HANG_UP_GRACE_MS before it names the peer dead
 * (docs/bootstrap-hierarchy.md#abort-frames). The index of the link that
 * carried one (ab filled), or -1: the peer is named dead. */
static int ring_abort_within_grace(struct nccom_bootstrap *b, struct nccom_abort *ab)
{
	return nccom_links_poll(b->ring, NCCOM_MAX_LINKS, nccom_now_ms() + NCCOM_HANG_UP_GRACE_MS, abort_on, ab);
}

void nccom_peer_fail(struct nccom_bootstrap *b, int peer, int fd)
{
	int end = nccom_io_end();
	/* The watch passed a heard abort on already; a deaf rank (the planted
	 * fault of the kill tests) tells no one. */
	if (b->told || end == NCCOM_END_ABORTED || nccom_fault("deaf-after-gather"))
		return;
	struct nccom_gather g = {.links = b->ring,
				 .nlinks = NCCOM_MAX_LINKS,
				 .root_fd = -1,
				 .me = b->st.rank,
				 .root_name = b->root_name,
				 .phase = "point-to-point bootstrapSend / bootstrapRecv",
				 .ring_phase = BOOTSTRAP_PHASE_PEER,
				 .step = -1,
				 .listen = b->addresses_known ? b->st.peerCommAddresses : NULL};
	struct nccom_link pl = {.fd = fd, .rank = peer};
	snprintf(pl.name, sizeof pl.name, "point-to-point connection with rank %d", peer);
	if (fd >= 0) {
		nccom_peer_of(fd, pl.addr, sizeof pl.addr);
		if (strcmp(pl.addr, "?") == 0)
			pl.addr[0] = 0;
	}
	struct nccom_abort ab;
	memset(&ab, 0, sizeof ab);
	int e = 0;
	bool heard = false;
	if (nccom_extended() && nccom_last_abort()[0] != '\0') {
		/* The peer's ABORT, logged by nccom_recv_msg: its text goes on. */
		ab.len = (uint32_t)strnlen(nccom_last_abort(), BOOTSTRAP_ABORT_TEXT_MAX);
		memcpy(ab.text, nccom_last_abort(), ab.len);
		heard = true;
	} else if (end == NCCOM_END_ABORT_FRAME && fd >= 0)
		heard = nccom_frame_read_abort_body(fd, &ab) > 0;
	else if (end == NCCOM_END_CLOSED && fd >= 0 && !nccom_extended())
		heard = nccom_frame_find_abort(fd, &ab, &e) > 0; /* said why before it hung up */
	int via = -1;
	if (!heard && end == NCCOM_END_CLOSED && (via = ring_abort_within_grace(b, &ab)) >= 0)
		heard = true;
	if (heard)
		(void)nccom_gather_aborted(&g, via >= 0 ? &b->ring[via] : &pl, &ab);
	else if (end == NCCOM_END_RING_GONE)
		(void)nccom_gather_fault(&g, &pl, "went (its ring link with this rank ended, with no abort, while this rank still waited for its point-to-point message)");
	else if (end == NCCOM_END_CLOSED)
		(void)nccom_gather_fault(&g, &pl, "went (it closed or reset its point-to-point connection before this rank's own deadline)");
	else if (end == NCCOM_END_TIMEOUT)
		(void)nccom_gather_fault(&g, NULL, "timed out (%s, %d s) on its point-to-point exchange with rank %d, which it does not name dead: that rank may be alive and waiting too",
					 ENV_SOCK_TIMEOUT, nccom_timeout(), peer);
	else
		(void)nccom_gather_fault(&g, NULL, "failed its point-to-point exchange with rank %d (see rank %d's log)", peer, b->st.rank);
	b->told = true;
	nccom_gather_abort(&g);
	nccom_tell_peers(b, &g.ab, heard || end == NCCOM_END_CLOSED ? fd : -1);
}
