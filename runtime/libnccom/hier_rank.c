/*
 * The rank side of the hierarchical bootstrap (bootstrapInitWithHierarchy,
 * docs/sources.md#s001-3; the protocol in docs/bootstrap-hierarchy.md): the
 * INFO_TO_ROOT record says the instance shape (extInfoHier), INFO_FROM_ROOT
 * names the intra-instance ring successor and, for a local leader, the
 * inter-instance one (bootstrap_root_reply_hier); the all-gather runs up the
 * intra ring, round the leaders' inter ring in instance blocks and back down
 * each intra ring: (L-1)+(H-1)+(L-1) sequential steps instead of N-1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccom.h"

/* The names a rank's ring neighbours go by in its log lines. */
struct hier_names {
	char intra_prev[64], intra_next[64], inter_prev[64], inter_next[64];
};

static void names_of(const struct nccom_bootstrap *b, struct hier_names *nm)
{
	int L = b->per_instance, h = b->instance, H = b->ninstances, ln = b->local_n, l = b->local;
	snprintf(nm->intra_prev, sizeof nm->intra_prev, "intra ring predecessor rank %d", h * L + (l - 1 + ln) % ln);
	snprintf(nm->intra_next, sizeof nm->intra_next, "intra ring successor rank %d", h * L + (l + 1) % ln);
	snprintf(nm->inter_prev, sizeof nm->inter_prev, "inter ring predecessor (leader) rank %d", ((h - 1 + H) % H) * L);
	snprintf(nm->inter_next, sizeof nm->inter_next, "inter ring successor (leader) rank %d", ((h + 1) % H) * L);
}

/* A ring connection opens with the sender's rank, since a leader accepts
 * both its rings' predecessors on one listen socket
 * (docs/bootstrap-hierarchy.md#wiring): a HELLO on channel RING (intra) or
 * INTER_RING in the extended framing, one frame holding the rank as an int
 * in the default one (the first frame of NCCL 2.9's point-to-point opening). */
static NRT_STATUS open_ring(struct nccom_bootstrap *b, const nccl_socket_address_t *to, uint32_t channel, const char *who, int *fd)
{
	nccom_addr a;
	memcpy(&a, to, sizeof a);
	if (a.sa.sa_family != AF_INET && a.sa.sa_family != AF_INET6) {
		nccom_warn("bootstrap rank %d: the root gave no address (family %d) for its %s", b->st.rank, a.sa.sa_family, who);
		return NRT_FAILURE;
	}
	NRT_STATUS rc = nccom_connect(&a, fd, nccom_op_deadline());
	if (rc != NRT_SUCCESS)
		return rc;
	if (nccom_extended())
		return nccom_send_hello(*fd, b->st.rank, b->st.nranks, channel, who);
	int me = b->st.rank;
	return nccom_send_frame(*fd, &me, (int)sizeof me, who);
}

/* Accept the count ring predecessors due (want[i] on channel[i] into
 * *fds[i]) in whatever order they come, each told by the rank (and, in the
 * extended framing, the channel) its opening names, all by one deadline.
 * Anything else is a peer of another world or shape: refused by name, the
 * join fails. */
static NRT_STATUS accept_rings(struct nccom_bootstrap *b, int count, const int *want, const uint32_t *channel, const char *const *names, int **fds)
{
	nccom_deadline d = nccom_op_deadline();
	for (int got_n = 0; got_n < count; got_n++) {
		int fd = -1;
		nccom_addr from;
		char what[160];
		snprintf(what, sizeof what, "%s%s%s", names[0], count > 1 ? " or " : "", count > 1 ? names[1] : "");
		NRT_STATUS rc = nccom_accept(b->st.extListenFd, &fd, &from, what, d);
		if (rc != NRT_SUCCESS)
			return rc;
		char addr[80], conn[120];
		nccom_format_addr(&from, addr, sizeof addr);
		snprintf(conn, sizeof conn, "a connecting ring peer %s", addr);
		int r = -1, got = 0;
		uint32_t ch = 0;
		if (nccom_extended()) {
			struct bootstrap_peer_hello h;
			rc = nccom_recv_hello(fd, &h, conn, d);
			ch = h.channel;
			if (rc == NRT_SUCCESS && ((h.channel != BOOTSTRAP_CHANNEL_RING && h.channel != BOOTSTRAP_CHANNEL_INTER_RING) || h.nranks != b->st.nranks)) {
				nccom_warn("bootstrap rank %d: %s opened channel %u of a world of %d where a ring peer of this world of %d was due (%s)",
					   b->st.rank, conn, h.channel, h.nranks, b->st.nranks, what);
				rc = NRT_FAILURE;
			}
			r = h.rank;
			got = (int)sizeof r;
		} else {
			rc = nccom_recv_frame_by(fd, &r, (int)sizeof r, &got, conn, d);
		}
		int slot = -1;
		for (int i = 0; i < count && rc == NRT_SUCCESS && got == (int)sizeof r; i++)
			if (want[i] == r && *fds[i] < 0 && (!nccom_extended() || channel[i] == ch))
				slot = i;
		if (rc != NRT_SUCCESS || slot < 0) {
			if (rc == NRT_SUCCESS)
				nccom_warn("bootstrap rank %d: a connection from %s naming rank %d (channel %u) arrived where the %s was due (per_instance %d: is that rank's per_instance the same?)",
					   b->st.rank, addr, got == (int)sizeof r ? r : -1, ch, what, b->per_instance);
			nccom_close(&fd);
			return rc != NRT_SUCCESS ? rc : NRT_FAILURE;
		}
		*fds[slot] = fd;
	}
	return NRT_SUCCESS;
}

NRT_STATUS nccom_hier_join(struct nccom_bootstrap *b, const nccom_addr *root, const nccom_addr *me, int L, uint64_t *cluster_id, time_t *epoch)
{
	int rank = b->st.rank, n = b->st.nranks;
	int h = rank / L, H = nccom_hier_ninstances(n, L), ln = nccom_hier_local_n(n, L, h);
	struct extInfoHier rec;
	memset(&rec, 0, sizeof rec);
	NRT_STATUS rc = nccom_fill_info(b, me, true, &rec.info);
	if (rc != NRT_SUCCESS)
		return rc;
	rec.per_instance = (uint32_t)L;
	rec.instance = (uint32_t)h;
	if (nccom_fault("wrong-instance"))
		rec.instance = (uint32_t)((h + 1) % H);
	struct bootstrap_root_reply_hier reply;
	memset(&reply, 0, sizeof reply);
	if ((rc = nccom_root_exchange(b, root, true, &rec, (int)sizeof rec, &reply, (int)sizeof reply)) != NRT_SUCCESS)
		return rc;
	if (reply.instance != (uint32_t)h || reply.ninstances != (uint32_t)H || reply.local_rank != (uint32_t)(rank % L) ||
	    reply.local_n != (uint32_t)ln) {
		char text[80];
		nccom_format_addr(root, text, sizeof text);
		nccom_warn("bootstrap rank %d: the root %s places it as local rank %u of %u in instance %u of %u; with %d ranks per instance (%s) it is local rank %d of %d in instance %d of %d: the root and this rank disagree on the instance shape",
			   rank, text, reply.local_rank, reply.local_n, reply.instance, reply.ninstances, L, ENV_BOOTSTRAP_PER_INSTANCE, rank % L, ln, h, H);
		return NRT_FAILURE;
	}
	b->per_instance = L;
	b->instance = h;
	b->ninstances = H;
	b->local = rank % L;
	b->local_n = ln;
	*cluster_id = reply.cluster_id;
	*epoch = reply.epoch;
	/* A non-leader has no inter ring: an address there is one it must not use. */
	static const nccl_socket_address_t none;
	if (rank % L != 0 && memcmp(&reply.inter_next, &none, sizeof none) != 0) {
		char text[80];
		nccom_format_addr(root, text, sizeof text);
		nccom_warn("bootstrap rank %d: the root %s gives this rank, local rank %d and no leader, an inter-instance successor", rank, text, rank % L);
		return NRT_FAILURE;
	}
	nccom_info("bootstrap rank %d: hierarchical, local rank %d of %d in instance %d of %d", rank, b->local, ln, h, H);
	struct hier_names nm;
	names_of(b, &nm);
	bool leader = b->local == 0, inter = leader && H > 1;
	/* Connect first, then accept: a connect completes in the peer's
	 * backlog, so no two ranks wait on each other here. */
	if (ln > 1 && (rc = open_ring(b, &reply.intra_next, BOOTSTRAP_CHANNEL_RING, nm.intra_next, &b->st.extRingSendFd)) != NRT_SUCCESS)
		return rc;
	if (ln > 1)
		nccom_link_wired(&b->ring[NCCOM_LINK_NEXT], b->st.extRingSendFd, h * L + (b->local + 1) % ln, nm.intra_next);
	if (inter && (rc = open_ring(b, &reply.inter_next, BOOTSTRAP_CHANNEL_INTER_RING, nm.inter_next, &b->inter_send_fd)) != NRT_SUCCESS)
		return rc;
	if (inter)
		nccom_link_wired(&b->ring[NCCOM_LINK_INTER_NEXT], b->inter_send_fd, ((h + 1) % H) * L, nm.inter_next);
	int want[2], count = 0, *fds[2];
	uint32_t channel[2];
	const char *names[2];
	if (ln > 1) {
		want[count] = h * L + (b->local - 1 + ln) % ln;
		names[count] = nm.intra_prev;
		channel[count] = BOOTSTRAP_CHANNEL_RING;
		fds[count++] = &b->st.extRingRecvFd;
	}
	if (inter) {
		want[count] = ((h - 1 + H) % H) * L;
		names[count] = nm.inter_prev;
		channel[count] = BOOTSTRAP_CHANNEL_INTER_RING;
		fds[count++] = &b->inter_recv_fd;
	}
	if (count > 0 && (rc = accept_rings(b, count, want, channel, names, fds)) != NRT_SUCCESS)
		return rc;
	if (ln > 1)
		nccom_link_wired(&b->ring[NCCOM_LINK_PREV], b->st.extRingRecvFd, want[0], names[0]);
	if (inter)
		nccom_link_wired(&b->ring[NCCOM_LINK_INTER_PREV], b->inter_recv_fd, want[count - 1], names[count - 1]);
	return NRT_SUCCESS;
}

/* Phase 3 of a rank not leading (docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather):
 * the other instances' blocks come in one frame from the side of the
 * instance's ring this rank is on — locals 1..ln/2 from the predecessor,
 * the rest from the successor — and go on away from the leader unless the
 * next one that way is where the other chain ends. */
static NRT_STATUS down(struct nccom_bootstrap *b, struct nccom_gather *g, const struct nccom_slices *intra, char *all, char *buf, size_t before,
		       size_t after)
{
	int ln = b->local_n, l = b->local, fwd = nccom_bidirectional() ? ln / 2 : ln - 1;
	bool from_prev = l <= fwd;
	int in = from_prev ? NCCOM_LINK_PREV : NCCOM_LINK_NEXT, out = from_prev ? NCCOM_LINK_NEXT : NCCOM_LINK_PREV;
	bool onward = from_prev ? l < fwd : l > fwd + 1;
	size_t other = before + after;
	struct nccom_move mv[NCCOM_MAX_LINKS];
	memset(mv, 0, sizeof mv);
	mv[in] = (struct nccom_move){.in = buf, .in_len = other, .recv = true};
	mv[out].watch = onward;
	g->ring_phase = BOOTSTRAP_PHASE_DOWN;
	g->step = 0;
	NRT_STATUS rc = nccom_step(g, mv);
	/* buf is the ranks before this instance, then those after it. */
	if (rc == NRT_SUCCESS)
		rc = nccom_check_relayed(intra, 0, buf, before, g->links[in].name);
	if (rc == NRT_SUCCESS)
		rc = nccom_check_relayed(intra, b->instance * b->per_instance + ln, buf + before, after, g->links[in].name);
	if (rc != NRT_SUCCESS) {
		if (!g->failed)
			(void)nccom_gather_fault(g, &g->links[in], "relayed a forged record (see rank %d's log)", g->me);
		return rc;
	}
	memcpy(all, buf, before);
	memcpy(all + before + (size_t)ln * intra->rec, buf + before, after);
	if (!onward)
		return NRT_SUCCESS;
	memset(mv, 0, sizeof mv);
	mv[out] = (struct nccom_move){.out = buf, .out_len = other, .send = true};
	return nccom_step(g, mv);
}

NRT_STATUS nccom_hier_allgather(struct nccom_bootstrap *b, struct nccom_gather *g, char *all, int size)
{
	int n = b->st.nranks, L = b->per_instance, h = b->instance, H = b->ninstances, ln = b->local_n, l = b->local;
	size_t B = (size_t)size;
	NRT_STATUS rc = NRT_SUCCESS;
	if (l != 0 && nccom_fault("die-nonleader"))
		_exit(3);
	/* 1: the instance's records over the intra ring (ceil((L_h-1)/2) steps). */
	struct nccom_slices intra = {.base = all + (size_t)h * (size_t)L * B, .unit = B, .last = B, .k = ln,
				     .check = b->relay_check, .first = h * L, .rec = B, .rank_off = b->relay_rank_off};
	/* The links this rank sends on after its intra ring: a leader's down
	 * both ways and its inter ring, a relay's onward one. */
	bool both = nccom_bidirectional();
	int fwd = both ? ln / 2 : ln - 1;
	bool leader = l == 0, from_prev = l <= fwd, onward = from_prev ? l < fwd : l > fwd + 1;
	struct nccom_ring iring = {.next = NCCOM_LINK_NEXT, .prev = NCCOM_LINK_PREV, .phase = BOOTSTRAP_PHASE_INTRA_RING};
	iring.later[NCCOM_LINK_NEXT] = leader || (onward && from_prev);
	iring.later[NCCOM_LINK_PREV] = leader ? both && ln > 2 : onward && !from_prev;
	iring.later[NCCOM_LINK_INTER_NEXT] = iring.later[NCCOM_LINK_INTER_PREV] = leader && H > 1;
	if (ln > 1 && (rc = nccom_ring_gather(g, &iring, &intra, l)) != NRT_SUCCESS)
		return rc;
	/* 2: the leaders' instance blocks over the inter ring (ceil((H-1)/2)
	 * steps); the last block is short when the last instance is. */
	if (l == 0 && H > 1) {
		if (nccom_fault("die-leader"))
			_exit(3);
		struct nccom_slices blocks = {.base = all, .unit = (size_t)L * B, .last = (size_t)(n - (H - 1) * L) * B, .k = H,
					      .check = b->relay_check, .rec = B, .rank_off = b->relay_rank_off};
		struct nccom_ring xring = {.next = NCCOM_LINK_INTER_NEXT, .prev = NCCOM_LINK_INTER_PREV, .phase = BOOTSTRAP_PHASE_INTER_RING};
		xring.later[NCCOM_LINK_NEXT] = ln > 1;
		xring.later[NCCOM_LINK_PREV] = both && ln > 2;
		if ((rc = nccom_ring_gather(g, &xring, &blocks, h)) != NRT_SUCCESS)
			return rc;
	}
	if (ln == 1)
		return NRT_SUCCESS;
	/* 3: the other instances' blocks down the intra ring in one frame, both
	 * ways round from the leader (ceil((L_h-1)/2) hops). */
	size_t before = (size_t)h * (size_t)L * B, after = (size_t)(n - h * L - ln) * B, other = before + after;
	char *buf = malloc(other > 0 ? other : 1);
	if (buf == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	if (l == 0) {
		memcpy(buf, all, before);
		memcpy(buf + before, all + before + (size_t)ln * B, after);
		struct nccom_move mv[NCCOM_MAX_LINKS];
		memset(mv, 0, sizeof mv);
		mv[NCCOM_LINK_NEXT] = (struct nccom_move){.out = buf, .out_len = other, .send = true};
		if (both && ln > 2)
			mv[NCCOM_LINK_PREV] = (struct nccom_move){.out = buf, .out_len = other, .send = true};
		g->ring_phase = BOOTSTRAP_PHASE_DOWN;
		g->step = 0;
		rc = nccom_step(g, mv);
	} else {
		rc = down(b, g, &intra, all, buf, before, after);
	}
	free(buf);
	return rc;
}
