/*
 * The rank side of the bootstrap (bootstrapInit / bootstrapInitFlat,
 * docs/sources.md#s001-3): the extState and its life, the flat join
 * (INFO_TO_ROOT / INFO_FROM_ROOT with the root through root_exchange.c, then
 * the ring: connect to the successor, accept the predecessor) or the
 * hierarchical one (hier_rank.c), the all-gather of every listen address
 * over the ring of ring.c, and the point-to-point messages of upstream NCCL
 * 2.9 over per-peer cached fds.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccom.h"

static NRT_STATUS lock(pthread_mutex_t *m)
{
	return pthread_mutex_lock(m) == 0 ? NRT_SUCCESS : NRT_FAILURE;
}

static void unlock(pthread_mutex_t *m)
{
	if (pthread_mutex_unlock(m) != 0)
		nccom_warn("bootstrap: mutex unlock failed");
}

static nccom_addr peer_addr(const struct nccom_bootstrap *b, int r)
{
	nccom_addr a;
	memcpy(&a, &b->st.peerCommAddresses[r], sizeof a);
	return a;
}

static void peer_name(const struct nccom_bootstrap *b, int r, char *out, size_t n)
{
	char text[80] = "?";
	if (b->st.peerCommAddresses != NULL) {
		nccom_addr a = peer_addr(b, r);
		nccom_format_addr(&a, text, sizeof text);
	}
	snprintf(out, n, "rank %d (%s)", r, text);
}

/* The fd slot of ring link i. */
static int *link_fd(struct nccom_bootstrap *b, int i)
{
	int *slot[NCCOM_MAX_LINKS] = {&b->st.extRingSendFd, &b->st.extRingRecvFd, &b->inter_send_fd, &b->inter_recv_fd};
	return slot[i];
}

/* Every all-gather of the world: the flat ring, or hier_rank.c's three
 * phases; on a failure its reason goes on as an ABORT on every link
 * (abort.c), so the ranks beyond hear who failed and where at once. */
static NRT_STATUS gather(struct nccom_bootstrap *b, char *all, int size, const char *phase)
{
	struct nccom_gather g = {.links = b->ring, .nlinks = NCCOM_MAX_LINKS, .root_fd = b->root_fd, .me = b->st.rank, .root_name = b->root_name,
				 .phase = phase, .step = -1, .listen = b->addresses_known ? b->st.peerCommAddresses : NULL};
	for (int i = 0; i < NCCOM_MAX_LINKS; i++) {
		b->ring[i].fd = *link_fd(b, i);
		b->ring[i].dead = false;
	}
	NRT_STATUS rc;
	if (b->per_instance > 0) {
		rc = nccom_hier_allgather(b, &g, all, size);
	} else {
		struct nccom_slices sl = {.base = all, .unit = (size_t)size, .last = (size_t)size, .k = b->st.nranks,
					  .check = b->relay_check, .rec = (size_t)size, .rank_off = b->relay_rank_off};
		struct nccom_ring ring = {.next = NCCOM_LINK_NEXT, .prev = NCCOM_LINK_PREV, .phase = BOOTSTRAP_PHASE_FLAT_RING};
		rc = nccom_ring_gather(&g, &ring, &sl, b->st.rank);
	}
	if (rc != NRT_SUCCESS) {
		nccom_gather_abort(&g);
		if (g.failed && !b->told) {
			b->told = true;
			nccom_tell_peers(b, &g.ab, -1);
		}
	}
	return rc;
}

NRT_STATUS nccom_bootstrap_allgather_records(struct nccom_bootstrap *b, void *all, int size, size_t rank_off, const char *phase)
{
	if (b->st.nranks == 1)
		return NRT_SUCCESS;
	NRT_STATUS rc = lock(&b->ring_mu);
	if (rc != NRT_SUCCESS)
		return rc;
	b->relay_check = true;
	b->relay_rank_off = rank_off;
	rc = gather(b, all, size, phase);
	b->relay_check = false;
	unlock(&b->ring_mu);
	return rc;
}

NRT_STATUS nccom_bootstrap_allgather(struct nccom_bootstrap *b, void *all, int size, const char *phase)
{
	if (b->st.nranks == 1)
		return NRT_SUCCESS;
	NRT_STATUS rc = lock(&b->ring_mu);
	if (rc != NRT_SUCCESS)
		return rc;
	rc = gather(b, all, size, phase);
	unlock(&b->ring_mu);
	return rc;
}

static struct nccom_bootstrap *alloc_bootstrap(int rank, int nranks)
{
	struct nccom_bootstrap *b = calloc(1, sizeof *b);
	if (b == NULL)
		return NULL;
	b->st.rank = rank;
	b->st.nranks = nranks;
	b->range_n = nranks;
	b->st.extListenFd = b->st.extRingRecvFd = b->st.extRingSendFd = b->root_fd = -1;
	b->inter_send_fd = b->inter_recv_fd = -1;
	for (int i = 0; i < NCCOM_MAX_LINKS; i++)
		b->ring[i] = (struct nccom_link){.fd = -1, .rank = -1};
	b->st.peerCommAddresses = calloc((size_t)nranks, sizeof(nccl_socket_address_t));
	b->st.peerCommSendFd = malloc((size_t)nranks * sizeof(int));
	b->st.peerCommRecvFd = malloc((size_t)nranks * sizeof(int));
	/* The mutexes made before one that fails are undone. */
	pthread_mutex_t *mu[] = {&b->send_mu, &b->recv_mu, &b->ring_mu};
	size_t made = 0, want = sizeof mu / sizeof mu[0];
	if (b->st.peerCommAddresses != NULL && b->st.peerCommSendFd != NULL && b->st.peerCommRecvFd != NULL)
		while (made < want && pthread_mutex_init(mu[made], NULL) == 0)
			made++;
	if (made < want) {
		while (made > 0)
			if (pthread_mutex_destroy(mu[--made]) != 0)
				nccom_warn("bootstrap: a mutex destroy failed");
		free(b->st.peerCommAddresses);
		free(b->st.peerCommSendFd);
		free(b->st.peerCommRecvFd);
		free(b);
		return NULL;
	}
	for (int i = 0; i < nranks; i++)
		b->st.peerCommSendFd[i] = b->st.peerCommRecvFd[i] = -1;
	return b;
}

void nccom_bootstrap_close(struct nccom_bootstrap *b)
{
	if (b == NULL)
		return;
	if (b->queue != NULL)
		nccom_warn(NRTABI_MSG_NCCOM_UNEXPECTED_CONNECTIONS);
	while (b->queue != NULL) {
		struct nccom_unexpected *u = b->queue;
		b->queue = u->next;
		nccom_close(&u->fd);
		free(u);
	}
	for (int i = 0; i < b->st.nranks; i++) {
		nccom_close(&b->st.peerCommSendFd[i]);
		nccom_close(&b->st.peerCommRecvFd[i]);
	}
	nccom_close(&b->root_fd);
	nccom_close(&b->st.extListenFd);
	/* What a ring peer sent and nobody read is drained first: closing over
	 * it would reset the connection, and a peer that is reset may lose the
	 * ABORT it has not read yet (abort.c). */
	for (int i = 0; i < NCCOM_MAX_LINKS; i++) {
		int *fd = link_fd(b, i);
		char sink[4096];
		for (int k = 0; *fd >= 0 && k < 256 && recv(*fd, sink, sizeof sink, MSG_DONTWAIT) > 0; k++)
			;
		nccom_close(fd);
	}
	free(b->st.peerCommAddresses);
	free(b->st.peerCommSendFd);
	free(b->st.peerCommRecvFd);
	/* Each is destroyed whether or not another failed. */
	int held = (pthread_mutex_destroy(&b->send_mu) != 0) + (pthread_mutex_destroy(&b->recv_mu) != 0) + (pthread_mutex_destroy(&b->ring_mu) != 0);
	if (held > 0)
		nccom_warn("bootstrap close: a mutex was still held");
	free(b);
}

static NRT_STATUS exchange_with_root(struct nccom_bootstrap *b, const nccom_addr *root, const nccom_addr *me, bool global,
				     struct bootstrap_root_reply *reply)
{
	struct extInfoGlobal info;
	NRT_STATUS rc = nccom_fill_info(b, me, global, &info);
	if (rc != NRT_SUCCESS)
		return rc;
	return nccom_root_exchange(b, root, false, &info, global ? (int)sizeof info : (int)sizeof info.info, reply, (int)sizeof *reply);
}

/* bootstrapInitFlat: the root exchange, then the ring (connect the
 * successor, accept the predecessor). */
static NRT_STATUS flat_join(struct nccom_bootstrap *b, const nccom_addr *root, const nccom_addr *me, bool global, struct bootstrap_root_reply *reply)
{
	int rank = b->st.rank, nranks = b->st.nranks;
	NRT_STATUS rc = exchange_with_root(b, root, me, global, reply);
	if (rc != NRT_SUCCESS)
		return rc;
	nccom_addr next;
	memcpy(&next, &reply->neighbour, sizeof next);
	char pred[128], succ[48];
	snprintf(pred, sizeof pred, "ring predecessor rank %d", (rank - 1 + nranks) % nranks);
	snprintf(succ, sizeof succ, "ring successor rank %d", (rank + 1) % nranks);
	if ((rc = nccom_connect(&next, &b->st.extRingSendFd, nccom_op_deadline())) != NRT_SUCCESS)
		return rc;
	nccom_link_wired(&b->ring[NCCOM_LINK_NEXT], b->st.extRingSendFd, (rank + 1) % nranks, succ);
	if (nccom_extended() && (rc = nccom_send_hello(b->st.extRingSendFd, rank, nranks, BOOTSTRAP_CHANNEL_RING, succ)) != NRT_SUCCESS)
		return rc;
	nccom_addr from;
	if ((rc = nccom_accept(b->st.extListenFd, &b->st.extRingRecvFd, &from, pred, nccom_op_deadline())) != NRT_SUCCESS)
		return rc;
	char from_text[80];
	nccom_format_addr(&from, from_text, sizeof from_text);
	nccom_link_wired(&b->ring[NCCOM_LINK_PREV], b->st.extRingRecvFd, (rank - 1 + nranks) % nranks, pred);
	snprintf(pred + strlen(pred), sizeof pred - strlen(pred), " (peer %s)", from_text);
	if (nccom_extended()) {
		struct bootstrap_peer_hello h;
		if ((rc = nccom_recv_hello(b->st.extRingRecvFd, &h, pred, nccom_op_deadline())) != NRT_SUCCESS)
			return rc;
		if (h.channel != BOOTSTRAP_CHANNEL_RING || h.rank != (rank - 1 + nranks) % nranks || h.nranks != nranks) {
			nccom_warn("a connection from %s claiming rank %d of %d (channel %u) arrived where the ring predecessor rank %d was due",
				   from_text, h.rank, h.nranks, h.channel, (rank - 1 + nranks) % nranks);
			return NRT_FAILURE;
		}
	}
	return NRT_SUCCESS;
}

NRT_STATUS nccom_bootstrap_init(const struct ncclUniqueId *id, int rank, int nranks, bool global,
				struct nccom_bootstrap **out, uint64_t *cluster_id, time_t *epoch)
{
	*out = NULL;
	uint32_t vnc = 0;
	NRT_STATUS rc = nrt_get_total_vnc_count(&vnc); /* reverse leg: the seed's gate */
	if (rc != NRT_SUCCESS) {
		nccom_warn("bootstrapInit: nrt_get_total_vnc_count returned %d", rc);
		return rc;
	}
	if (vnc != 0) {
		nccom_info("bootstrapInit: nrt_get_total_vnc_count() = %u: single vNC, no bootstrap", vnc);
		return NRT_SUCCESS; /* comm->bootstrap stays NULL (docs/sources.md#s001-3-gotcha) */
	}
	if (nranks < 1 || nranks > BOOTSTRAP_MAX_RANKS || rank < 0 || rank >= nranks) {
		nccom_warn(NRTABI_MSG_NCCOM_INVALID_RANK, rank, nranks);
		return NRT_INVALID;
	}
	int L = 0;
	if ((rc = nccom_per_instance(&L)) != NRT_SUCCESS)
		return rc;
	if (global)
		nccom_set_files_limit();
	nccom_addr root;
	memcpy(&root, id->internal, sizeof root);
	if ((rc = nccom_net_init(&root)) != NRT_SUCCESS)
		return rc;
	/* A global init of several roots (NRTABI_BOOTSTRAP_ROOTS): this rank's
	 * root is the one of its range, and its stagger counts within it
	 * (docs/bootstrap-hierarchy.md#multi-root-range-assignment). */
	struct nccom_roots roots;
	if (global && (rc = nccom_roots_get(&roots)) != NRT_SUCCESS)
		return rc;
	int lo = 0, hi = nranks;
	if (global && roots.n > 0) {
		if ((rc = nccom_roots_check(roots.n, nranks, L, global)) != NRT_SUCCESS) {
			nccom_roots_free(&roots);
			return rc;
		}
		int i = nccom_root_of(rank, roots.n, nranks, L, global);
		root = roots.addr[i];
		nccom_root_range(i, roots.n, nranks, L, global, &lo, &hi);
		nccom_roots_free(&roots);
	}
	struct nccom_bootstrap *b = alloc_bootstrap(rank, nranks);
	if (b == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	b->range_lo = lo;
	b->range_n = hi - lo;
	nccom_addr me = nccom_if_addr();
	struct bootstrap_root_reply reply;
	memset(&reply, 0, sizeof reply);
	if ((rc = nccom_listen(&me, &b->st.extListenFd)) != NRT_SUCCESS)
		goto fail;
	/* bootstrapInitWithHierarchy (hier_rank.c) wires other rings; the
	 * address all-gather and the root's RING_DONE/COMPLETE are the same. */
	if (nccom_hierarchical(global, nranks, L))
		rc = nccom_hier_join(b, &root, &me, L, &reply.cluster_id, &reply.epoch);
	else
		rc = flat_join(b, &root, &me, global, &reply);
	if (rc != NRT_SUCCESS)
		goto fail;
	memcpy(&b->st.peerCommAddresses[rank], &me, sizeof me);
	if ((rc = nccom_bootstrap_allgather(b, b->st.peerCommAddresses, (int)sizeof(nccl_socket_address_t), NCCOM_PHASE_ADDRESSES)) != NRT_SUCCESS)
		goto fail;
	b->addresses_known = true;
	if (nccom_extended()) {
		char where[96], text[80];
		nccom_format_addr(&root, text, sizeof text);
		snprintf(where, sizeof where, "the root %s", text);
		if ((rc = nccom_send_msg(b->root_fd, BOOTSTRAP_MSG_RING_DONE, NULL, 0, where)) != NRT_SUCCESS ||
		    (rc = nccom_recv_want(b->root_fd, BOOTSTRAP_MSG_COMPLETE, NULL, 0, where)) != NRT_SUCCESS)
			goto fail;
		nccom_close(&b->root_fd);
	}
	*cluster_id = reply.cluster_id;
	*epoch = reply.epoch;
	*out = b;
	return NRT_SUCCESS;
fail:
	nccom_warn("bootstrap: rank %d of %d failed to join the world", rank, nranks);
	nccom_bootstrap_close(b);
	return rc;
}

static NRT_STATUS send_locked(struct nccom_bootstrap *b, int peer, const void *data, int size);

/* An abort frame on ring link i while this rank waits on a point-to-point
 * socket: the world failed after this rank's gather ended. Read, logged
 * and passed on, unless a gather holds the links (it reads them itself). */
static bool watch_aborted(void *arg, int i)
{
	struct nccom_bootstrap *b = arg;
	if (pthread_mutex_trylock(&b->ring_mu) != 0)
		return false;
	struct nccom_gather g = {.links = b->ring, .nlinks = NCCOM_MAX_LINKS, .root_fd = -1, .me = b->st.rank, .root_name = b->root_name,
				 .phase = "point-to-point bootstrapSend / bootstrapRecv", .step = -1};
	for (int k = 0; k < NCCOM_MAX_LINKS; k++) {
		b->ring[k].fd = *link_fd(b, k);
		b->ring[k].dead = false;
	}
	struct nccom_abort ab;
	int e = 0;
	bool got = nccom_frame_find_abort(b->ring[i].fd, &ab, &e) > 0;
	if (got && !b->told) {
		(void)nccom_gather_aborted(&g, &b->ring[i], &ab);
		b->told = true;
		nccom_gather_abort(&g);
		nccom_tell_peers(b, &g.ab, -1);
	}
	unlock(&b->ring_mu);
	return got;
}

/* A failed point-to-point send or receive told to the world (peer_fail.c),
 * unless a gather holds the ring links (it tells them itself). */
static void peer_failed(struct nccom_bootstrap *b, int peer, int fd)
{
	if (pthread_mutex_trylock(&b->ring_mu) != 0)
		return;
	for (int k = 0; k < NCCOM_MAX_LINKS; k++) {
		b->ring[k].fd = *link_fd(b, k);
		b->ring[k].dead = false;
	}
	nccom_peer_fail(b, peer, fd);
	unlock(&b->ring_mu);
}

/* The watch of b's ring links for this thread, until nccom_watch_set(NULL). */
static void watch(struct nccom_bootstrap *b, struct nccom_watch *w, int peer)
{
	*w = (struct nccom_watch){.aborted = watch_aborted, .arg = b, .peer = peer};
	for (int i = 0; i < NCCOM_MAX_LINKS; i++) {
		w->fds[i] = *link_fd(b, i);
		w->ranks[i] = b->ring[i].rank;
	}
	/* The kill tests' planted fault: a rank deaf to the world's abort. */
	nccom_watch_set(nccom_fault("deaf-after-gather") ? NULL : w);
}

NRT_STATUS nccom_bootstrap_send(struct nccom_bootstrap *b, int peer, const void *data, int size)
{
	struct nccom_watch w;
	NRT_STATUS rc = lock(&b->send_mu);
	if (rc != NRT_SUCCESS)
		return rc;
	watch(b, &w, peer);
	nccom_io_end_reset();
	rc = send_locked(b, peer, data, size);
	if (rc != NRT_SUCCESS)
		peer_failed(b, peer, b->st.peerCommSendFd[peer]);
	nccom_watch_set(NULL);
	/* The kill tests' hook: a death just after this rank's gather, once its
	 * first point-to-point message is out (docs/bootstrap-hierarchy.md#abort-frames). */
	if (rc == NRT_SUCCESS && nccom_fault("die-after-p2p-send"))
		(void)raise(SIGKILL);
	unlock(&b->send_mu);
	return rc;
}

static NRT_STATUS send_locked(struct nccom_bootstrap *b, int peer, const void *data, int size)
{
	char who[128];
	peer_name(b, peer, who, sizeof who);
	NRT_STATUS rc = NRT_SUCCESS;
	int *fd = &b->st.peerCommSendFd[peer];
	if (*fd < 0) {
		nccom_addr a = peer_addr(b, peer);
		int me = b->st.rank, tag = BOOTSTRAP_P2P_TAG;
		rc = nccom_connect(&a, fd, nccom_op_deadline());
		if (rc == NRT_SUCCESS && nccom_extended())
			rc = nccom_send_hello(*fd, me, b->st.nranks, BOOTSTRAP_CHANNEL_PEER, who);
		else if (rc == NRT_SUCCESS) {
			rc = nccom_send_frame(*fd, &me, (int)sizeof me, who);
			if (rc == NRT_SUCCESS)
				rc = nccom_send_frame(*fd, &tag, (int)sizeof tag, who);
		}
		if (rc != NRT_SUCCESS)
			nccom_close(fd);
	}
	if (rc == NRT_SUCCESS)
		rc = nccom_send_data(*fd, BOOTSTRAP_MSG_PEER_DATA, data, size, who);
	return rc;
}

/* A connection whose hello claimed rank r of n: "rank 3 (claimed by ADDR)"
 * when r is a rank of this world, else why it is not. The hello is not
 * authenticated, so the address is what says who spoke. */
static bool claimed(int r, int n, const char *addr, char *out, size_t len)
{
	if (r < 0 || r >= n) {
		snprintf(out, len, "%s claiming rank %d of %d: out of range 0..%d", addr, r, n, n - 1);
		return false;
	}
	snprintf(out, len, "rank %d (claimed by %s)", r, addr);
	return true;
}

/* Said once when find_conn gives up, if it refused anyone on the way:
 * how many, and the last one's address. */
static void warn_refused(const struct nccom_bootstrap *b, int refused, const char *who, const char *last)
{
	if (refused > 0)
		nccom_warn("bootstrap rank %d: refused %d connections while waiting for %s, the last from %s", b->st.rank, refused, who, last);
}

/* The connection of (peer, tag): from the queue of unexpected ones, else the
 * next accepted one that names it; the others are queued (upstream). The
 * whole search has one deadline: strangers that keep connecting are
 * refused without restarting it
 * (docs/libnccom.md#deadlines-and-what-peers-send). */
static NRT_STATUS find_conn(struct nccom_bootstrap *b, int peer, int *out)
{
	for (struct nccom_unexpected **p = &b->queue; *p; p = &(*p)->next) {
		if ((*p)->peer == peer && (*p)->tag == BOOTSTRAP_P2P_TAG) {
			struct nccom_unexpected *u = *p;
			*p = u->next;
			*out = u->fd;
			free(u);
			return NRT_SUCCESS;
		}
	}
	char who[128], last[80] = "";
	peer_name(b, peer, who, sizeof who);
	nccom_deadline d = nccom_op_deadline();
	int refused = 0;
	for (;;) {
		int fd = -1, r = -1, tag = -1, got = 0;
		nccom_addr from;
		NRT_STATUS rc = nccom_accept(b->st.extListenFd, &fd, &from, who, d);
		if (rc != NRT_SUCCESS) {
			warn_refused(b, refused, who, last);
			return rc;
		}
		char addr[80], conn[128], claim[160];
		nccom_format_addr(&from, addr, sizeof addr);
		snprintf(conn, sizeof conn, "a connecting peer %s", addr);
		if (nccom_extended()) {
			struct bootstrap_peer_hello h;
			rc = nccom_recv_hello(fd, &h, conn, d);
			r = h.rank;
			tag = BOOTSTRAP_P2P_TAG;
			got = (int)sizeof tag;
			if (rc == NRT_SUCCESS && h.channel == BOOTSTRAP_CHANNEL_ABORT) {
				if (h.nranks == b->st.nranks && claimed(h.rank, b->st.nranks, addr, claim, sizeof claim)) {
					uint32_t type = 0;
					char text[8];
					/* The ABORT is logged, naming the rank it claims to come from and
					 * the address it came from, and fails this call. */
					(void)nccom_recv_msg_by(fd, &type, text, sizeof text, NULL, claim, d);
					nccom_close(&fd);
					return NRT_FAILURE;
				}
				if (h.nranks != b->st.nranks)
					snprintf(claim, sizeof claim, "%s claiming rank %d of %d: not a peer of this world of %d", addr, h.rank, h.nranks, b->st.nranks);
				nccom_warn("bootstrap rank %d: refused an ABORT from %s", b->st.rank, claim);
				snprintf(last, sizeof last, "%s", addr);
				refused++;
				nccom_close(&fd);
				continue;
			}
			if (rc == NRT_SUCCESS && (h.channel != BOOTSTRAP_CHANNEL_PEER || h.nranks != b->st.nranks))
				r = INT32_MIN;
		} else {
			rc = nccom_recv_frame_by(fd, &r, (int)sizeof r, &got, conn, d);
			if (rc == NRT_SUCCESS && got == (int)sizeof r)
				rc = nccom_recv_frame_by(fd, &tag, (int)sizeof tag, &got, conn, d);
		}
		if (rc != NRT_SUCCESS && (nccom_io_end() == NCCOM_END_ABORTED || nccom_io_end() == NCCOM_END_RING_GONE)) {
			/* The wait for this connection's opening met the world's abort
			 * on a ring link, or the end of the awaited peer's ring link
			 * (docs/bootstrap-hierarchy.md#abort-frames): the search ends
			 * with it; refusing the stranger and waiting on would leave
			 * this rank to its deadline, the abort already read. */
			nccom_close(&fd);
			warn_refused(b, refused, who, last);
			return NRT_FAILURE;
		}
		if (rc != NRT_SUCCESS || got != (int)sizeof tag || r < 0 || r >= b->st.nranks || r == b->st.rank) {
			if (rc != NRT_SUCCESS || got != (int)sizeof tag)
				snprintf(claim, sizeof claim, "%s: no whole hello", addr);
			else if (r == INT32_MIN)
				snprintf(claim, sizeof claim, "%s: not a peer hello of this world of %d", addr, b->st.nranks);
			else if (r == b->st.rank)
				snprintf(claim, sizeof claim, "%s claiming rank %d: this rank's own", addr, r);
			else
				(void)claimed(r, b->st.nranks, addr, claim, sizeof claim); /* r is out of range: the text says so */
			if (nccom_extended())
				nccom_warn("bootstrap rank %d: refused a connection from %s", b->st.rank, claim);
			else
				nccom_warn("bootstrap rank %d: refused a connection from %s (tag %d)", b->st.rank, claim, tag);
			snprintf(last, sizeof last, "%s", addr);
			refused++;
			nccom_close(&fd);
			continue;
		}
		if (r == peer && tag == BOOTSTRAP_P2P_TAG) {
			*out = fd;
			return NRT_SUCCESS;
		}
		/* A peer caches its one connection, so a second claim to the same
		 * rank is not queued: strangers cannot pile up descriptors. */
		bool dup = b->st.peerCommRecvFd[r] >= 0;
		for (struct nccom_unexpected *q = b->queue; q && !dup; q = q->next)
			dup = q->peer == r && q->tag == tag;
		if (dup) {
			nccom_warn("bootstrap rank %d: refused a second connection claiming rank %d, from %s", b->st.rank, r, addr);
			snprintf(last, sizeof last, "%s", addr);
			refused++;
			nccom_close(&fd);
			continue;
		}
		struct nccom_unexpected *u = malloc(sizeof *u);
		if (u == NULL) {
			nccom_close(&fd);
			return NRT_FAIL_HOST_MEM_ALLOC;
		}
		*u = (struct nccom_unexpected){.peer = r, .tag = tag, .fd = fd, .next = b->queue};
		b->queue = u;
	}
}

NRT_STATUS nccom_bootstrap_recv(struct nccom_bootstrap *b, int peer, void *data, int size)
{
	char who[128];
	peer_name(b, peer, who, sizeof who);
	NRT_STATUS rc = lock(&b->recv_mu);
	if (rc != NRT_SUCCESS)
		return rc;
	struct nccom_watch w;
	watch(b, &w, peer);
	nccom_io_end_reset();
	int *fd = &b->st.peerCommRecvFd[peer];
	if (*fd < 0)
		rc = find_conn(b, peer, fd);
	if (rc == NRT_SUCCESS)
		rc = nccom_recv_data(*fd, BOOTSTRAP_MSG_PEER_DATA, data, size, who);
	if (rc != NRT_SUCCESS)
		peer_failed(b, peer, *fd);
	nccom_watch_set(NULL);
	unlock(&b->recv_mu);
	return rc;
}
