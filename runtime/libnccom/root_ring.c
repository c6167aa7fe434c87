/*
 * The roots' ring of a multi-root world
 * (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring): root i dials root
 * i+1 and sends its range (root 0: and the cluster id it minted), takes root
 * i-1's range among its ranks' records (root.c), then, once its ranks are
 * in, passes its first rank's listen address back and the cluster id on, so
 * that the last rank of its range (and its last instance's leader) can be
 * given the next range's first rank as successor. Each record is one
 * default frame opening with BOOTSTRAP_ROOT_SANITY; what another root sends
 * is checked against the rule and refused naming that root and its address.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "nccom.h"

static void root_name(const struct nccom_root_ring *rr, int i, char *out, size_t n)
{
	char text[80];
	nccom_format_addr(&rr->roots[i], text, sizeof text);
	snprintf(out, n, "root %d (%s)", i, text);
}

static int next_of(const struct nccom_root_ring *rr) { return (rr->index + 1) % rr->nroots; }
static int prev_of(const struct nccom_root_ring *rr) { return (rr->index - 1 + rr->nroots) % rr->nroots; }

static NRT_STATUS fail(const struct nccom_root_ring *rr, const char *fmt, const char *a, const char *b)
{
	char me[120];
	root_name(rr, rr->index, me, sizeof me);
	nccom_warn("bootstrap %s, in the %s (root ring): %s%s%s", me, nccom_phase_name(BOOTSTRAP_PHASE_ROOT), fmt, a, b);
	return NRT_FAILURE;
}

NRT_STATUS nccom_root_ring_open(struct nccom_root_ring *rr)
{
	rr->next_fd = rr->prev_fd = -1;
	if (rr->index == 0) {
		if (getrandom(&rr->cluster, sizeof rr->cluster, 0) != (ssize_t)sizeof rr->cluster)
			rr->cluster = (uint64_t)time(NULL) * 2654435761u;
		rr->epoch = time(NULL);
	}
	char next[120];
	root_name(rr, next_of(rr), next, sizeof next);
	/* The roots start at about the same time: refused connects are retried within the timeout. */
	if (nccom_connect(&rr->roots[next_of(rr)], &rr->next_fd, nccom_op_deadline()) != NRT_SUCCESS)
		return fail(rr, "could not reach the next ", next, "");
	int lo = rr->lo, count = rr->hi - rr->lo;
	if (nccom_fault("root-wrong-range"))
		lo++;
	struct bootstrap_root_range rg = {.sanity = BOOTSTRAP_ROOT_SANITY, .nroots = (uint32_t)rr->nroots, .index = (uint32_t)rr->index, .nranks = (uint32_t)rr->n,
					  .per_instance = (uint32_t)rr->L, .lo = (uint32_t)lo, .count = (uint32_t)count};
	if (nccom_send_frame(rr->next_fd, &rg, (int)sizeof rg, next) != NRT_SUCCESS)
		return fail(rr, "could not send its range to the next ", next, "");
	if (rr->index == 0) {
		struct bootstrap_root_cluster c = {.sanity = BOOTSTRAP_ROOT_SANITY, .index = 0, .cluster_id = rr->cluster, .epoch = rr->epoch};
		if (nccom_send_frame(rr->next_fd, &c, (int)sizeof c, next) != NRT_SUCCESS)
			return fail(rr, "could not send the cluster id to the next ", next, "");
	}
	return NRT_SUCCESS;
}

NRT_STATUS nccom_root_ring_take_range(struct nccom_root_ring *rr, int *fd, const void *rec, const char *peer)
{
	struct bootstrap_root_range rg;
	memcpy(&rg, rec, sizeof rg);
	int p = prev_of(rr), lo = 0, hi = 0;
	nccom_root_range(p, rr->nroots, rr->n, rr->L, rr->global, &lo, &hi);
	char why[400], who[140];
	snprintf(who, sizeof who, "root (peer %s)", peer);
	why[0] = 0;
	if (rr->prev_fd >= 0)
		snprintf(why, sizeof why, "%s: a second root connection, the previous root already came", who);
	else if (rg.sanity != BOOTSTRAP_ROOT_SANITY)
		snprintf(why, sizeof why, "%s sent a 32-byte record with magic %#08x, expected %#08x (a root of the roots' ring)", who, rg.sanity, BOOTSTRAP_ROOT_SANITY);
	else if ((int)rg.nroots != rr->nroots || (int)rg.nranks != rr->n || (int)rg.per_instance != rr->L)
		snprintf(why, sizeof why, "%s serves a world of %u ranks, %u roots, per_instance %u; this root's has %d ranks, %d roots, per_instance %d: give every root the same %s, world size and L",
			 who, rg.nranks, rg.nroots, rg.per_instance, rr->n, rr->nroots, rr->L, ENV_BOOTSTRAP_ROOTS);
	else if ((int)rg.index != p)
		snprintf(why, sizeof why, "%s says it is root %u, but root %d's predecessor on the roots' ring is root %d", who, rg.index, rr->index, p);
	else if ((int)rg.lo != lo || (int)rg.count != hi - lo)
		snprintf(why, sizeof why, "root %d (peer %s) claims ranks %u..%lld, the rule gives root %d ranks %d..%d", p, peer, rg.lo, (long long)rg.lo + rg.count - 1, p, lo,
			 hi - 1);
	if (why[0])
		return fail(rr, why, "", "");
	rr->prev_fd = *fd;
	*fd = -1;
	return NRT_SUCCESS;
}

NRT_STATUS nccom_root_ring_finish(struct nccom_root_ring *rr, const nccl_socket_address_t *first, nccl_socket_address_t *next_first)
{
	char next[120], prev[120];
	root_name(rr, next_of(rr), next, sizeof next);
	root_name(rr, prev_of(rr), prev, sizeof prev);
	struct bootstrap_root_first f = {.sanity = BOOTSTRAP_ROOT_SANITY, .index = (uint32_t)rr->index, .first = *first};
	if (nccom_send_frame(rr->prev_fd, &f, (int)sizeof f, prev) != NRT_SUCCESS)
		return fail(rr, "could not send its first rank's address to the previous ", prev, "");
	int got = 0;
	memset(&f, 0, sizeof f);
	if (nccom_recv_frame(rr->next_fd, &f, (int)sizeof f, &got, next) != NRT_SUCCESS || got != (int)sizeof f)
		return fail(rr, "no first-rank record from the next ", next, "");
	nccom_addr a;
	memcpy(&a, &f.first, sizeof a);
	if (f.sanity != BOOTSTRAP_ROOT_SANITY || (int)f.index != next_of(rr) || (a.sa.sa_family != AF_INET && a.sa.sa_family != AF_INET6))
		return fail(rr, "a first-rank record with a bad magic, index or address from the next ", next, "");
	*next_first = f.first;
	struct bootstrap_root_cluster c;
	memset(&c, 0, sizeof c);
	if (nccom_recv_frame(rr->prev_fd, &c, (int)sizeof c, &got, prev) != NRT_SUCCESS || got != (int)sizeof c)
		return fail(rr, "no cluster record from the previous ", prev, "");
	if (c.sanity != BOOTSTRAP_ROOT_SANITY || c.index != 0)
		return fail(rr, "a cluster record with a bad magic or index from the previous ", prev, "");
	if (rr->index == 0) {
		if (c.cluster_id != rr->cluster || c.epoch != rr->epoch)
			return fail(rr, "the cluster id came back round the roots' ring changed, from the previous ", prev, "");
		return NRT_SUCCESS;
	}
	rr->cluster = c.cluster_id;
	rr->epoch = c.epoch;
	if (nccom_send_frame(rr->next_fd, &c, (int)sizeof c, next) != NRT_SUCCESS)
		return fail(rr, "could not pass the cluster id on to the next ", next, "");
	return NRT_SUCCESS;
}

void nccom_root_ring_close(struct nccom_root_ring *rr)
{
	nccom_close(&rr->next_fd);
	nccom_close(&rr->prev_fd);
}

/* ---- past the reply, extended framing ------------------------------------ */
/* Both roots' links stay open while the ranks wire their rings: root i
 * sends bootstrap_root_done to root i+1 once all its ranks sent RING_DONE,
 * and a bootstrap_root_abort for each failure it sees; every root passes
 * what the previous one sends on unless the next root is the record's
 * origin, so each record reaches every root once
 * (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring). The checks are
 * runtime/transport/tcp's parseRootRec, with its texts. */

bool nccom_root_rec_parse(const struct nccom_root_ring *rr, const void *buf, int got, const char *from, struct nccom_root_rec *out, char *why, size_t len)
{
	const unsigned char *b = buf;
	memset(out, 0, sizeof *out);
	out->rank = -1;
	uint32_t magic = 0;
	if (got >= 4)
		memcpy(&magic, b, 4);
	if (got < 4 || magic != BOOTSTRAP_ROOT_SANITY) {
		snprintf(why, len, "%s sent a %d-byte record with magic %#08x on the roots' ring, expected %#08x", from, got, magic, BOOTSTRAP_ROOT_SANITY);
		return false;
	}
	uint32_t index = 0;
	bool done = got == (int)sizeof(struct bootstrap_root_done);
	if (done) {
		struct bootstrap_root_done d;
		memcpy(&d, b, sizeof d);
		if ((int)d.nroots != rr->nroots) {
			snprintf(why, len, "%s relayed a done record whose field nroots is %u, this root's world has %d roots", from, d.nroots, rr->nroots);
			return false;
		}
		index = d.index;
	} else if (got >= (int)sizeof(struct bootstrap_root_abort)) {
		struct bootstrap_root_abort a;
		memcpy(&a, b, sizeof a);
		index = a.index;
	} else {
		snprintf(why, len, "%s sent a %d-byte record on the roots' ring: a done record is %d bytes, an abort %d plus its text", from, got,
			 (int)sizeof(struct bootstrap_root_done), (int)sizeof(struct bootstrap_root_abort));
		return false;
	}
	if (index >= (uint32_t)rr->nroots) {
		snprintf(why, len, "%s relayed a record whose field index is %u, but the world has %d roots", from, index, rr->nroots);
		return false;
	}
	if ((int)index == rr->index) {
		snprintf(why, len, "%s relayed root %d's own record back to it: a relay passed it on past its origin (each record goes round once)", from, rr->index);
		return false;
	}
	int lo = 0, hi = 0;
	nccom_root_range((int)index, rr->nroots, rr->n, rr->L, rr->global, &lo, &hi);
	out->origin = (int)index;
	if (done) {
		struct bootstrap_root_done d;
		memcpy(&d, b, sizeof d);
		if ((int)d.count != hi - lo) {
			snprintf(why, len, "%s relayed root %u's done record with field count %u, the rule gives root %u ranks %d..%d (%d)", from, index, d.count, index, lo, hi - 1,
				 hi - lo);
			return false;
		}
		out->done = true;
		return true;
	}
	struct bootstrap_root_abort a;
	memcpy(&a, b, sizeof a);
	if ((long)a.text_len != (long)got - (long)sizeof a || a.text_len > BOOTSTRAP_ABORT_TEXT_MAX) {
		snprintf(why, len, "%s relayed root %u's abort record with field text_len %u in a %d-byte record (text at most %d)", from, index, a.text_len, got,
			 BOOTSTRAP_ABORT_TEXT_MAX);
		return false;
	}
	if (a.kind != BOOTSTRAP_ROOT_ABORT_HUNG_UP && a.kind != BOOTSTRAP_ROOT_ABORT_REPORT) {
		snprintf(why, len, "%s relayed root %u's abort record with field kind %u, expected %u (hung up) or %u (report)", from, index, a.kind,
			 BOOTSTRAP_ROOT_ABORT_HUNG_UP, BOOTSTRAP_ROOT_ABORT_REPORT);
		return false;
	}
	if (a.rank != -1 && (a.rank < lo || a.rank >= hi)) {
		snprintf(why, len, "%s relayed root %u's abort record with field rank %d, not one of root %u's ranks %d..%d", from, index, a.rank, index, lo, hi - 1);
		return false;
	}
	if (a.kind == BOOTSTRAP_ROOT_ABORT_HUNG_UP && a.rank == -1) {
		snprintf(why, len, "%s relayed root %u's abort record of kind hung up with field rank -1: a hang-up names its rank", from, index);
		return false;
	}
	out->rank = a.rank;
	out->kind = a.kind;
	nccom_escape(b + sizeof a, a.text_len, out->text, sizeof out->text);
	return true;
}

static NRT_STATUS send_next(const struct nccom_root_ring *rr, const void *rec, int size)
{
	char next[120];
	root_name(rr, next_of(rr), next, sizeof next);
	return nccom_send_frame(rr->next_fd, rec, size, next);
}

void nccom_root_ring_relay(const struct nccom_root_ring *rr, const void *rec, int size, int origin)
{
	if (origin != next_of(rr) && send_next(rr, rec, size) != NRT_SUCCESS)
		nccom_warn("bootstrap root %d: a record of the roots' ring not passed on to root %d", rr->index, next_of(rr));
}

NRT_STATUS nccom_root_ring_done(const struct nccom_root_ring *rr)
{
	struct bootstrap_root_done d = {.sanity = BOOTSTRAP_ROOT_SANITY, .nroots = (uint32_t)rr->nroots, .index = (uint32_t)rr->index,
					 .count = (uint32_t)(rr->hi - rr->lo)};
	return send_next(rr, &d, (int)sizeof d);
}

void nccom_root_ring_publish(const struct nccom_root_ring *rr, int rank, uint32_t kind, const char *text)
{
	unsigned char rec[sizeof(struct bootstrap_root_abort) + BOOTSTRAP_ABORT_TEXT_MAX];
	struct bootstrap_root_abort a = {.sanity = BOOTSTRAP_ROOT_SANITY, .index = (uint32_t)rr->index, .rank = rank, .kind = kind,
					  .text_len = (uint32_t)strnlen(text, BOOTSTRAP_ABORT_TEXT_MAX)};
	memcpy(rec, &a, sizeof a);
	memcpy(rec + sizeof a, text, a.text_len);
	if (send_next(rr, rec, (int)(sizeof a + a.text_len)) != NRT_SUCCESS)
		nccom_warn("bootstrap root %d: an abort record not sent to root %d", rr->index, next_of(rr));
}
