/*
 * The ring all-gather over slices laid end to end (docs/bootstrap-hierarchy.md):
 * the flat ring of bootstrap.c, an instance's intra ring and the leaders'
 * inter ring of hier_rank.c all step through it, and every record a ring
 * relays is held to its slot here before it is passed on
 * (docs/bootstrap-hierarchy.md#forged-relays). Both directions of each ring
 * carry data (docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather); it knows the
 * sockets and the framing only through step.c.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "nccom.h"

static size_t slice_len(const struct nccom_slices *s, int x) { return x == s->k - 1 ? s->last : s->unit; }
static char *slice_at(const struct nccom_slices *s, int x) { return s->base + (size_t)x * s->unit; }

NRT_STATUS nccom_ring_gather(struct nccom_gather *g, const struct nccom_ring *ring, const struct nccom_slices *s, int me)
{
	bool both = nccom_bidirectional();
	int k = s->k, fwd = both ? k / 2 : k - 1, back = both ? (k - 1) / 2 : 0;
	g->ring_phase = ring->phase;
	struct nccom_link *next = &g->links[ring->next], *prev = &g->links[ring->prev];
	for (int i = 0; i < fwd; i++) {
		struct nccom_move mv[NCCOM_MAX_LINKS];
		memset(mv, 0, sizeof mv);
		int out = (me - i + k) % k, in = (me - i - 1 + k) % k;
		mv[ring->next] = (struct nccom_move){.out = slice_at(s, out), .out_len = slice_len(s, out), .send = true};
		mv[ring->prev] = (struct nccom_move){.in = slice_at(s, in), .in_len = slice_len(s, in), .recv = true};
		int bout = (me + i) % k, bin = (me + i + 1) % k;
		if (i < back) {
			mv[ring->prev].out = slice_at(s, bout);
			mv[ring->prev].out_len = slice_len(s, bout);
			mv[ring->prev].send = true;
			mv[ring->next].in = slice_at(s, bin);
			mv[ring->next].in_len = slice_len(s, bin);
			mv[ring->next].recv = true;
		}
		for (int j = 0; j < NCCOM_MAX_LINKS; j++)
			mv[j].watch = ring->later[j];
		mv[ring->next].watch |= i < fwd - 1;
		mv[ring->prev].watch |= i < back - 1;
		g->step = i;
		NRT_STATUS rc = nccom_step(g, mv);
		/* Each record is held to its slot before the next step relays it. */
		bool in_bad = false;
		if (rc == NRT_SUCCESS && s->check)
			in_bad = (rc = nccom_check_relayed(s, s->first + (int)((size_t)in * s->unit / s->rec), slice_at(s, in), slice_len(s, in), prev->name)) != NRT_SUCCESS;
		if (rc == NRT_SUCCESS && s->check && i < back)
			rc = nccom_check_relayed(s, s->first + (int)((size_t)bin * s->unit / s->rec), slice_at(s, bin), slice_len(s, bin), next->name);
		if (rc != NRT_SUCCESS && !g->failed)
			(void)nccom_gather_fault(g, in_bad ? prev : next, "relayed a forged record (see rank %d's log)", g->me);
		if (rc != NRT_SUCCESS)
			return rc;
		/* The kill test's hook: a real death mid-gather, sockets closed by the kernel. */
		if (i == 0 && strcmp(g->phase, NCCOM_PHASE_PEERS) == 0 && nccom_fault("kill-mid-gather"))
			(void)raise(SIGKILL);
	}
	return NRT_SUCCESS;
}

NRT_STATUS nccom_check_relayed(const struct nccom_slices *s, int first, const char *in, size_t len, const char *from)
{
	if (!s->check || s->rec < s->rank_off + sizeof(int32_t))
		return NRT_SUCCESS;
	for (size_t i = 0; i + s->rec <= len; i += s->rec) {
		int32_t got;
		memcpy(&got, in + i + s->rank_off, sizeof got);
		int rank = first + (int)(i / s->rec);
		if (got != rank) {
			nccom_warn("bootstrap all-gather: a forged record in rank %d's slot (the record says rank %d): the forger is %s, which relayed it, not rank %d",
				   rank, (int)got, from, rank);
			return NRT_FAILURE;
		}
	}
	return NRT_SUCCESS;
}
