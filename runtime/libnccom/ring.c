/*
 * The ring all-gather over slices laid end to end (docs/bootstrap-hierarchy.md):
 * the flat ring of bootstrap.c, an instance's intra ring and the leaders'
 * inter ring of hier_rank.c all step through it, and every record a ring
 * relays is held to its slot here before it is passed on
 * (docs/bootstrap-hierarchy.md#forged-relays). It knows the sockets and the
 * framing only through extended.c's ring step.
 */
#include <string.h>

#include "nccom.h"

NRT_STATUS nccom_ring_gather(int send_fd, int recv_fd, const char *next, const char *prev, const struct nccom_slices *s, int me)
{
	int k = s->k;
	for (int i = 0; i < k - 1; i++) {
		int out = (me - i + k) % k, in = (me - i - 1 + k) % k;
		size_t out_len = out == k - 1 ? s->last : s->unit, in_len = in == k - 1 ? s->last : s->unit;
		NRT_STATUS rc = nccom_ring_step(send_fd, s->base + (size_t)out * s->unit, (int)out_len, next, recv_fd, s->base + (size_t)in * s->unit,
						 (int)in_len, prev);
		if (rc == NRT_SUCCESS && s->check)
			rc = nccom_check_relayed(s, s->first + (int)((size_t)in * s->unit / s->rec), s->base + (size_t)in * s->unit, in_len, prev);
		if (rc != NRT_SUCCESS)
			return rc;
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
