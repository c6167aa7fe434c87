/*
 * The bootstrap root (bootstrapCreateRoot + bootstrapRootFlat, docs/sources.md#s001-3
 * and §5): a detached thread that takes one INFO_TO_ROOT record per rank,
 * validates the world (magic, rank count, duplicates, and on a global init
 * the git-hash tags), then answers every rank INFO_FROM_ROOT on the fd it
 * came in on and closes it. On a bad world it closes every connection, so
 * each waiting rank fails at once instead of at its timeout.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nccom.h"

/* The seed's 140-byte root-args block holds the listen fd, the world size and
 * flags; ours says what the thread needs. */
struct root_args {
	int listen_fd, nranks;
	int per_instance; /* L of a hierarchical world (hier_root.c), else 0 */
	bool global;
	char where[80];
	/* Root index of nroots (root_ring.c), serving ranks [lo, hi); one root: 0 of 1, [0, n). */
	int nroots, index, lo, hi;
	nccom_addr *roots;
};

void nccom_set_files_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		nccom_warn(NRTABI_MSG_NCCOM_RLIMIT_FAILED, strerror(errno));
		return;
	}
	if (rl.rlim_cur == rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		nccom_warn(NRTABI_MSG_NCCOM_SETRLIMIT_FAILED, strerror(errno));
}

/* The git-hash bytes are the peer's: escaped before they are logged
 * (docs/libnccom.md#deadlines-and-what-peers-send). */
#define TAG_TEXT_SIZE (2 * NCCOM_ESCAPED_SIZE(sizeof(((nccl_nrt_git_hash_t *)0)->nccom)) + 32)

static void tag_text(const nccl_nrt_git_hash_t *h, char *out, size_t n)
{
	char a[NCCOM_ESCAPED_SIZE(sizeof h->nccom)], b[NCCOM_ESCAPED_SIZE(sizeof h->nrt)];
	snprintf(out, n, "libnccom \"%s\" + libnrt \"%s\"", nccom_escape(h->nccom, strnlen(h->nccom, sizeof h->nccom), a, sizeof a),
		 nccom_escape(h->nrt, strnlen(h->nrt, sizeof h->nrt), b, sizeof b));
}

static bool same_tag(const struct extInfoGlobal *a, const struct extInfoGlobal *b)
{
	return memcmp(&a->nccl_nrt_git_hash, &b->nccl_nrt_git_hash, sizeof(nccl_nrt_git_hash_t)) == 0;
}

/* A world's cluster id and epoch, the same in every rank's INFO_FROM_ROOT. */
static void new_world(uint64_t *cluster, time_t *epoch)
{
	if (getrandom(cluster, sizeof *cluster, 0) != (ssize_t)sizeof *cluster)
		*cluster = (uint64_t)time(NULL) * 2654435761u;
	*epoch = time(NULL);
}

/* Rank r's INFO_FROM_ROOT: the world and its ring successor's listen
 * address; past the range's end the next range's first rank, beyond. */
static struct bootstrap_root_reply reply_for(const struct extInfoGlobal *rec, int r, int hi, const nccl_socket_address_t *beyond, uint64_t cluster,
					     time_t epoch)
{
	struct bootstrap_root_reply reply;
	memset(&reply, 0, sizeof reply);
	reply.cluster_id = cluster;
	reply.epoch = epoch;
	reply.neighbour = r + 1 < hi ? rec[r + 1].info.extAddressListen : *beyond;
	return reply;
}

/* The most common tag wins; ties go to the lowest rank. 0 or the odd rank + 1. */
static int odd_tag(const struct extInfoGlobal *rec, int n, int *ref)
{
	int best = 0, best_count = 0;
	for (int i = 0; i < n; i++) {
		int c = 0;
		for (int j = 0; j < n; j++)
			c += same_tag(&rec[i], &rec[j]);
		if (c > best_count) {
			best = i;
			best_count = c;
		}
	}
	*ref = best;
	for (int i = 0; i < n; i++)
		if (!same_tag(&rec[i], &rec[best]))
			return i + 1;
	return 0;
}

/* The record a rank sends this root, and what it is called in a refusal. */
static int record_size(const struct root_args *a)
{
	if (a->per_instance > 0)
		return (int)sizeof(struct extInfoHier);
	return a->global ? (int)sizeof(struct extInfoGlobal) : (int)sizeof(struct extInfo);
}

static const char *record_kind(const struct root_args *a, long got)
{
	if (a->per_instance > 0)
		return "extInfoHier, a hierarchical world: " ENV_BOOTSTRAP_PER_INSTANCE " set alike on every rank";
	/* A hierarchical rank at a flat root: the two disagree on L. */
	if (got == (long)sizeof(struct extInfoHier))
		return "a flat world at this root; 64 bytes is a hierarchical rank's extInfoHier: set " ENV_BOOTSTRAP_PER_INSTANCE
		       " alike on every rank and the root";
	return a->global ? "extInfo + nccl_nrt_git_hash, a global init" : "extInfo";
}

static void serve(struct root_args *a)
{
	int n = a->nranks, L = a->per_instance;
	int size = record_size(a);
	struct extInfoGlobal *rec = calloc((size_t)n, sizeof *rec);
	struct extInfoHier *hrec = calloc((size_t)n, sizeof *hrec);
	int *fds = malloc((size_t)n * sizeof *fds);
	nccom_addr *from = calloc((size_t)n, sizeof *from);
	struct nccom_root_ring rr = {.nroots = a->nroots, .index = a->index, .lo = a->lo, .hi = a->hi, .n = n, .L = L, .global = a->global,
				     .roots = a->roots, .next_fd = -1, .prev_fd = -1};
	if (rec == NULL || hrec == NULL || fds == NULL || from == NULL) {
		nccom_warn("bootstrap root %s: cannot allocate the tables of %d ranks", a->where, n);
		goto done;
	}
	for (int i = 0; i < n; i++)
		fds[i] = -1;
	if (a->global)
		nccom_set_files_limit();
	if (a->nroots > 1 && nccom_root_ring_open(&rr) != NRT_SUCCESS)
		goto done;
	for (int have = 0; have < a->hi - a->lo || (a->nroots > 1 && rr.prev_fd < 0);) {
		int fd = -1;
		char what[200];
		snprintf(what, sizeof what, "the next rank's INFO_TO_ROOT at the root %s (%d of %d ranks arrived)", a->where, have, n);
		/* Each rank may take the timeout to arrive; its record then has
		 * the timeout in total (nccom_recv_frame), however it drips. */
		nccom_addr peer;
		if (nccom_accept(a->listen_fd, &fd, &peer, what, nccom_op_deadline()) != NRT_SUCCESS)
			goto done;
		char ptext[80] = "?", pwho[96];
		nccom_format_addr(&peer, ptext, sizeof ptext);
		snprintf(pwho, sizeof pwho, "peer %s", ptext);
		/* Room for the largest record, so a record of the other shape is
		 * named as such rather than as a truncated message. */
		struct extInfoHier hr;
		memset(&hr, 0, sizeof hr);
		int got = 0;
		if (nccom_recv_frame(fd, &hr, (int)sizeof hr, &got, pwho) != NRT_SUCCESS) {
			nccom_close(&fd);
			goto done;
		}
		/* A local flat root (isGlobalInit = 0) also serves the one rank of
		 * a global init made without a root comm id, whose extInfo carries
		 * the git-hash tag (docs/sources.md#s001-5): its tag is not compared. */
		/* The previous root's range: its size is no record's (root_ring.c). */
		if (a->nroots > 1 && got == (int)sizeof(struct bootstrap_root_range)) {
			if (nccom_root_ring_take_range(&rr, &fd, &hr, ptext) != NRT_SUCCESS) {
				nccom_close(&fd);
				goto done;
			}
			continue;
		}
		bool tagged_at_local = !a->global && L == 0 && got == (int)sizeof(struct extInfoGlobal);
		if (got != size && !tagged_at_local) {
			nccom_warn("Bootstrap Root : peer %s sent a %d-byte extInfo, expected %d (%s)", ptext, got, size, record_kind(a, got));
			nccom_close(&fd);
			goto done;
		}
		struct extInfoGlobal r = hr.info;
		if (r.info.sanity != BOOTSTRAP_SANITY) {
			nccom_warn(NRTABI_MSG_NCCOM_ROOT_BAD_SANITY, r.info.sanity, ptext, BOOTSTRAP_SANITY);
			nccom_close(&fd);
			goto done;
		}
		if (r.info.nranks != n) {
			nccom_warn(NRTABI_MSG_NCCOM_ROOT_NRANKS_MISMATCH " (peer %s, rank %d)", n, r.info.nranks, ptext, r.info.rank);
			nccom_close(&fd);
			goto done;
		}
		/* The spec's text is for a rank taken twice; a rank outside the
		 * world is said to be out of range, so the line names what is
		 * wrong with the claim (docs/libnccom.md#deadlines-and-what-peers-send). */
		if (r.info.rank < 0 || r.info.rank >= n) {
			nccom_warn("Bootstrap Root : peer %s claims rank %d of %d: out of range 0..%d", ptext, r.info.rank, n, n - 1);
			nccom_close(&fd);
			goto done;
		}
		if (r.info.rank < a->lo || r.info.rank >= a->hi) {
			int o = nccom_root_of(r.info.rank, a->nroots, n, L, a->global), olo = 0, ohi = 0;
			nccom_root_range(o, a->nroots, n, L, a->global, &olo, &ohi);
			nccom_warn("Bootstrap Root : peer %s: rank %d belongs to root %d (ranks %d..%d), not this root %d (ranks %d..%d): give every rank the same %s",
				   ptext, r.info.rank, o, olo, ohi - 1, a->index, a->lo, a->hi - 1, ENV_BOOTSTRAP_ROOTS);
			nccom_close(&fd);
			goto done;
		}
		if (fds[r.info.rank] >= 0) {
			char first[80];
			nccom_format_addr(&from[r.info.rank], first, sizeof first);
			nccom_warn(NRTABI_MSG_NCCOM_ROOT_ALREADY_CHECKED_IN " (peer %s; first from %s)", r.info.rank, n, ptext, first);
			nccom_close(&fd);
			goto done;
		}
		if (L > 0) {
			char why[BOOTSTRAP_ABORT_TEXT_MAX] = "", pw[128];
			snprintf(pw, sizeof pw, "Bootstrap Root : peer %s rank %d", ptext, r.info.rank);
			nccom_hier_check(&hr, L, pw, why, sizeof why);
			if (why[0]) {
				nccom_warn("%s", why);
				nccom_close(&fd);
				goto done;
			}
		}
		rec[r.info.rank] = r;
		hrec[r.info.rank] = hr;
		fds[r.info.rank] = fd;
		from[r.info.rank] = peer;
		have++;
	}
	int ref = 0, odd = a->global ? odd_tag(rec + a->lo, a->hi - a->lo, &ref) : 0;
	ref += a->lo;
	odd += odd ? a->lo : 0;
	if (odd) {
		char t1[TAG_TEXT_SIZE], t2[TAG_TEXT_SIZE], at[80];
		tag_text(&rec[odd - 1].nccl_nrt_git_hash, t1, sizeof t1);
		tag_text(&rec[ref].nccl_nrt_git_hash, t2, sizeof t2);
		nccom_format_addr(&from[odd - 1], at, sizeof at);
		nccom_warn(NRTABI_MSG_NCCOM_ROOT_GIT_HASH_MISMATCH " (rank %d: peer %s)", odd - 1, t1, ref, t2, odd - 1, at);
		goto done;
	}
	uint64_t cluster;
	time_t epoch;
	nccl_socket_address_t beyond = rec[a->lo].info.extAddressListen;
	if (a->nroots > 1) {
		if (nccom_root_ring_finish(&rr, &rec[a->lo].info.extAddressListen, &beyond) != NRT_SUCCESS)
			goto done;
		cluster = rr.cluster;
		epoch = rr.epoch;
	} else {
		new_world(&cluster, &epoch);
	}
	for (int r = a->lo; r < a->hi; r++) {
		struct bootstrap_root_reply reply = reply_for(rec, r, a->hi, &beyond, cluster, epoch);
		struct bootstrap_root_reply_hier hreply;
		if (L > 0)
			hreply = nccom_hier_reply(hrec, r, n, L, a->lo, a->hi, &beyond, cluster, epoch);
		char who[128], at[80];
		nccom_format_addr(&from[r], at, sizeof at);
		snprintf(who, sizeof who, "rank %d (peer %s)", r, at);
		if ((L > 0 ? nccom_send_frame(fds[r], &hreply, (int)sizeof hreply, who) : nccom_send_frame(fds[r], &reply, (int)sizeof reply, who)) != NRT_SUCCESS)
			goto done; /* that rank is gone; the rest fail on the broken ring */
		nccom_close(&fds[r]);
	}
	nccom_info("bootstrap root %s: %d ranks answered (%s, root %d of %d)", a->where, a->hi - a->lo, L > 0 ? "hierarchical" : "flat", a->index, a->nroots);
done:
	nccom_root_ring_close(&rr);
	if (fds != NULL)
		for (int i = 0; i < n; i++)
			nccom_close(&fds[i]);
	free(fds);
	free(rec);
	free(hrec);
	free(from);
	nccom_close(&a->listen_fd);
}


/* ---- the extended framing's root (nrtabi extension) ------------------------ */

struct xconn {
	int fd, rank;
	char addr[80];
	char listen[80];	 /* its record's listen address, once admitted */
	bool replied;		 /* its INFO_FROM_ROOT went out */
	bool done, gone, failed; /* failed: it hung up or aborted while the rings wired */
};

static void who(const struct xconn *c, char *out, size_t n)
{
	if (c->rank < 0)
		snprintf(out, n, "peer %s", c->addr);
	else
		snprintf(out, n, "peer %s rank %d", c->addr, c->rank);
}

/* who() for a rank that hung up on its root, with what the root knows of
 * where it went: the address its peers dial and how far it had got
 * (docs/bootstrap-hierarchy.md#a-rank-that-hangs-up-on-its-root; the Go
 * root's goneName writes the same). */
static void gone_name(const struct xconn *c, char *out, size_t n)
{
	who(c, out, n);
	if (c->rank < 0 || !c->listen[0])
		return;
	size_t k = strlen(out);
	const char *phase = c->done ? "after its RING_DONE, before COMPLETE" : c->replied ? "after its INFO_FROM_ROOT went out, before its RING_DONE" : "before its INFO_FROM_ROOT";
	snprintf(out + k, n - k, " (listening on %s, %s)", c->listen, phase);
}

/* "ranks 2, 3" of those without a record (or not done). */
static void missing_list(struct xconn **by_rank, int lo, int hi, bool want_done, char *out, size_t len)
{
	int k = 0, count = 0;
	out[0] = 0;
	for (int r = lo; r < hi; r++)
		count += by_rank[r] == NULL || (want_done && !by_rank[r]->done);
	k = snprintf(out, len, count == 1 ? "rank" : "ranks");
	int shown = 0;
	for (int r = lo; r < hi && k > 0 && (size_t)k < len; r++) {
		if (!(by_rank[r] == NULL || (want_done && !by_rank[r]->done)))
			continue;
		if (shown == 8) {
			k += snprintf(out + k, len - (size_t)k, " and %d more", count - shown);
			break;
		}
		k += snprintf(out + k, len - (size_t)k, "%s %d", shown ? "," : "", r);
		shown++;
	}
}

static void heartbeat(struct xconn *conns, int nconns, int have, int n)
{
	struct bootstrap_root_wait w = {.have = (uint32_t)have, .nranks = (uint32_t)n};
	for (int i = 0; i < nconns; i++)
		if (conns[i].rank >= 0 && !conns[i].gone && nccom_send_msg(conns[i].fd, BOOTSTRAP_MSG_ROOT_WAIT, &w, sizeof w, conns[i].addr) != NRT_SUCCESS)
			conns[i].gone = true;
}

/* Validate one record; a non-empty reason refuses the world. */
static void admit(const struct root_args *a, struct xconn *c, const struct extInfoGlobal *r, struct xconn **by_rank, int n, char *reason, size_t len)
{
	char w[128];
	c->rank = r->info.rank;
	who(c, w, sizeof w);
	if (r->info.sanity != BOOTSTRAP_SANITY)
		snprintf(reason, len, "%s: bad sanity magic %#08x in INFO_TO_ROOT, expected %#08x (\"ilya\"): not a bootstrap peer of this release", w, r->info.sanity, BOOTSTRAP_SANITY);
	else if (r->info.nranks != n)
		snprintf(reason, len, "%s says nranks %d, this root serves a world of %d: start every rank with the same world size", w, r->info.nranks, n);
	else if (r->info.rank < 0 || r->info.rank >= n)
		snprintf(reason, len, "%s: rank %d is out of range 0..%d", w, r->info.rank, n - 1);
	else if (r->info.rank < a->lo || r->info.rank >= a->hi) {
		int o = nccom_root_of(r->info.rank, a->nroots, n, a->per_instance, a->global), olo = 0, ohi = 0;
		nccom_root_range(o, a->nroots, n, a->per_instance, a->global, &olo, &ohi);
		snprintf(reason, len, "%s: rank %d belongs to root %d (ranks %d..%d), not this root %d (ranks %d..%d): give every rank the same %s", w, r->info.rank, o,
			 olo, ohi - 1, a->index, a->lo, a->hi - 1, ENV_BOOTSTRAP_ROOTS);
	} else if (by_rank[r->info.rank] != NULL)
		snprintf(reason, len, "%s: rank %d is already taken by peer %s: give every process its own rank", w, r->info.rank, by_rank[r->info.rank]->addr);
	else {
		by_rank[r->info.rank] = c;
		nccom_format_addr((const nccom_addr *)&r->info.extAddressListen, c->listen, sizeof c->listen);
	}
}

static void git_hash_reason(const struct extInfoGlobal *rec, struct xconn **by_rank, int n, char *reason, size_t len)
{
	int ref = 0, odd = odd_tag(rec, n, &ref);
	if (!odd)
		return;
	int agree = 0, k = 0;
	for (int i = 0; i < n; i++)
		agree += same_tag(&rec[i], &rec[ref]);
	for (int i = 0; i < n && k >= 0 && (size_t)k < len; i++) {
		if (same_tag(&rec[i], &rec[ref]))
			continue;
		char w[128], t[TAG_TEXT_SIZE];
		who(by_rank[i], w, sizeof w);
		tag_text(&rec[i].nccl_nrt_git_hash, t, sizeof t);
		k += snprintf(reason + k, len - (size_t)k, "%s%s carries nccl_nrt_git_hash %s", k ? "; " : "", w, t);
	}
	char t[TAG_TEXT_SIZE];
	tag_text(&rec[ref].nccl_nrt_git_hash, t, sizeof t);
	if (k >= 0 && (size_t)k < len)
		snprintf(reason + k, len - (size_t)k, ", the other %d ranks %s: the hosts run different libnccom or libnrt builds", agree, t);
}

/* Tell everyone connected, then linger (at most the timeout) so ranks still
 * on their way hear it too, reading until each hangs up; not on a connection
 * that is gone or at fault (a peer that drips its record would otherwise
 * hold the root a second timeout). */
static void abort_world(struct root_args *a, struct xconn *conns, int *nconns, int cap, const char *reason)
{
	nccom_warn("bootstrap root %s: %s", a->where, reason);
	uint32_t len = (uint32_t)strnlen(reason, BOOTSTRAP_ABORT_TEXT_MAX);
	for (int i = 0; i < *nconns; i++) {
		if (nccom_send_msg(conns[i].fd, BOOTSTRAP_MSG_ABORT, reason, len, conns[i].addr) == NRT_SUCCESS)
			(void)shutdown(conns[i].fd, SHUT_WR); /* a hint to the peer: the fd is closed below either way */
	}
	int64_t deadline = nccom_now_ms() + (int64_t)nccom_timeout() * 1000;
	while (nccom_now_ms() < deadline && *nconns < cap && *nconns < a->hi - a->lo) {
		struct pollfd p = {.fd = a->listen_fd, .events = POLLIN};
		int w = poll(&p, 1, nccom_left_ms(deadline));
		if (w <= 0)
			break;
		nccom_addr from;
		socklen_t flen = sizeof from;
		int fd = accept4(a->listen_fd, &from.sa, &flen, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		struct xconn *c = &conns[(*nconns)++];
		*c = (struct xconn){.fd = fd, .rank = -1};
		nccom_format_addr(&from, c->addr, sizeof c->addr);
		if (nccom_send_msg(fd, BOOTSTRAP_MSG_ABORT, reason, len, c->addr) == NRT_SUCCESS)
			(void)shutdown(fd, SHUT_WR); /* a hint to the peer: the fd is closed below either way */
	}
	for (int i = 0; i < *nconns; i++) {
		char sink[256];
		while (!conns[i].gone && nccom_now_ms() < deadline) {
			struct pollfd p = {.fd = conns[i].fd, .events = POLLIN};
			if (poll(&p, 1, nccom_left_ms(deadline)) <= 0)
				break;
			ssize_t k = recv(conns[i].fd, sink, sizeof sink, MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
				break;
		}
	}
}

/* What the root learnt of the ranks that failed while the rings wired. */
struct verdict {
	bool failed;
	const struct nccom_root_ring *rr; /* the roots' links once they carry records, else NULL */
	bool published;			  /* this root told the next of a failure */
	bool heard;			  /* a failure came from another root: not told back */
	int ngone;
	char gone[1024];			      /* who hung up, saying nothing */
	char report[BOOTSTRAP_ABORT_TEXT_MAX + 1]; /* the first reason a rank sent */
};

/* Reads one message of c's while the rings wire: true for its RING_DONE;
 * a hang-up or an ABORT goes into v. */
static bool ring_done(struct xconn *c, struct verdict *v, nccom_deadline d)
{
	char w[128];
	who(c, w, sizeof w);
	uint32_t type = 0;
	char sink[8];
	NRT_STATUS rc = nccom_recv_msg_by(c->fd, &type, sink, 0, NULL, w, d);
	if (rc == NRT_SUCCESS && type == BOOTSTRAP_MSG_RING_DONE && !c->done) {
		c->done = true;
		return true;
	}
	v->failed = true;
	char said[BOOTSTRAP_ABORT_TEXT_MAX + 1] = "";
	if (rc != NRT_SUCCESS && type == BOOTSTRAP_MSG_ABORT) /* its word, even when it did not arrive whole */
		snprintf(said, sizeof said, "%s reports: %s", w, nccom_last_abort()[0] ? nccom_last_abort() : "an ABORT that did not arrive whole");
	else if (rc == NRT_SUCCESS) /* a peer off the protocol: its word, not a hang-up */
		snprintf(said, sizeof said, "%s sent %s where RING_DONE was due", w, c->done ? "a second RING_DONE" : "another message");
	if (said[0]) {
		if (!v->report[0])
			snprintf(v->report, sizeof v->report, "%s", said);
		c->failed = true; /* abort_world reads it until it hangs up */
		if (v->rr != NULL) {
			nccom_root_ring_publish(v->rr, c->rank, BOOTSTRAP_ROOT_ABORT_REPORT, said);
			v->published = true;
		}
		return false;
	}
	char g[256];
	gone_name(c, g, sizeof g);
	size_t k = strlen(v->gone);
	snprintf(v->gone + k, sizeof v->gone - k, "%s%s", v->ngone ? ", " : "", g);
	v->ngone++;
	c->failed = c->gone = true;
	if (v->rr != NULL) {
		nccom_root_ring_publish(v->rr, c->rank, BOOTSTRAP_ROOT_ABORT_HUNG_UP, g);
		v->published = true;
	}
	return false;
}

/* Another root's failure into v: a hang-up joins the list, a report is
 * the first reason unless one came already. */
static void fold(struct verdict *v, const struct nccom_root_rec *rec)
{
	if (rec->done)
		return;
	v->failed = v->heard = true;
	if (rec->kind == BOOTSTRAP_ROOT_ABORT_HUNG_UP) {
		size_t k = strlen(v->gone);
		snprintf(v->gone + k, sizeof v->gone - k, "%s%s", v->ngone ? ", " : "", rec->text);
		v->ngone++;
	} else if (!v->report[0]) {
		if (snprintf(v->report, sizeof v->report, "root %d reports: %s", rec->origin, rec->text) < 0)
			v->report[0] = '\0';
	}
}

/* The next record from the previous root into rec, passed on to the next
 * root: false when the link ended or sent something forged (why). */
static bool read_root_rec(struct nccom_root_ring *rr, struct nccom_root_rec *rec, char *why, size_t len)
{
	unsigned char buf[sizeof(struct bootstrap_root_abort) + BOOTSTRAP_ABORT_TEXT_MAX];
	char at[80], prev[120], bad[BOOTSTRAP_ABORT_TEXT_MAX];
	int p = (rr->index - 1 + rr->nroots) % rr->nroots, got = 0;
	nccom_format_addr(&rr->roots[p], at, sizeof at);
	snprintf(prev, sizeof prev, "previous root %d (%s)", p, at);
	if (nccom_recv_frame(rr->prev_fd, buf, (int)sizeof buf, &got, prev) != NRT_SUCCESS) {
		snprintf(why, len, "root ring: waiting for a record of the roots' ring: %s closed the connection or sent no whole frame (did its process die?)", prev);
		return false;
	}
	if (!nccom_root_rec_parse(rr, buf, got, prev, rec, bad, sizeof bad)) {
		if (snprintf(why, len, "root ring: %s", bad) < 0)
			why[0] = '\0'; /* cut to len at worst, like every reason */
		return false;
	}
	nccom_root_ring_relay(rr, buf, got, rec->origin);
	return true;
}

/* The root's verdict once a rank failed. The first failure to reach it is
 * often not the cause: when a process dies, the ranks that hear of it give
 * up too, telling the root why (an ABORT) before they hang up, and a root
 * that was not running finds several at once, in no order that says which
 * came first. So, like runtime/transport/tcp's root, it reads the others
 * for NCCOM_HANG_UP_GRACE_MS more and names every rank that hung up without
 * a word, then the first reason a rank reported
 * (docs/bootstrap-hierarchy.md#abort-frames). */
static void explain(struct xconn **by_rank, int lo, int hi, struct nccom_root_ring *rr, struct pollfd *p, struct verdict *v, int64_t tmo, char *reason, size_t len)
{
	int64_t grace = tmo < NCCOM_HANG_UP_GRACE_MS ? tmo : NCCOM_HANG_UP_GRACE_MS;
	nccom_deadline end = nccom_now_ms() + grace;
	int count = hi - lo;
	bool prev_open = rr != NULL && rr->prev_fd >= 0;
	for (int left; (left = nccom_left_ms(end)) > 0;) {
		/* A failed connection's fd is left out (-1): poll skips it. On a
		 * multi-root world the window is the world's: the previous root's
		 * link brings the other ranges' failures
		 * (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring). */
		for (int k = 0; k < count; k++)
			p[k] = (struct pollfd){.fd = by_rank[lo + k]->failed ? -1 : by_rank[lo + k]->fd, .events = POLLIN};
		p[count] = (struct pollfd){.fd = prev_open ? rr->prev_fd : -1, .events = POLLIN};
		int w = poll(p, (nfds_t)count + 1, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		for (int k = 0; k < count; k++)
			if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
				(void)ring_done(by_rank[lo + k], v, end + NCCOM_ABORT_WAIT_MS);
		if (p[count].revents & (POLLIN | POLLHUP | POLLERR)) {
			struct nccom_root_rec rec;
			char why[BOOTSTRAP_ABORT_TEXT_MAX];
			if (read_root_rec(rr, &rec, why, sizeof why))
				fold(v, &rec);
			else {
				prev_open = false;
				if (!v->report[0])
					snprintf(v->report, sizeof v->report, "%s", why);
			}
		}
	}
	int k = 0;
	if (v->ngone == 1)
		k = snprintf(reason, len, "%s closed its root connection before the world was complete (did its process die?)", v->gone);
	else if (v->ngone > 1)
		k = snprintf(reason, len, "%s closed their root connections before the world was complete (did their processes die?)", v->gone);
	if (k >= 0 && (size_t)k < len && v->report[0] && snprintf(reason + k, len - (size_t)k, "%s%s", k ? "; " : "", v->report) < 0)
		reason[k] = '\0'; /* truncated to len at worst, like every reason */
}

/* Peeks at a new connection's first 8 bytes: true when they are the
 * previous root's range frame (its size prefix 32 and the root magic, which
 * no extended header has: no message type is 32). Bounded by d. */
static bool is_root_conn(int fd, nccom_deadline d)
{
	uint32_t head[2] = {0, 0};
	for (;;) {
		ssize_t k = recv(fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
		if (k == (ssize_t)sizeof head)
			return head[0] == sizeof(struct bootstrap_root_range) && head[1] == BOOTSTRAP_ROOT_SANITY;
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
			return false; /* its reader names the hang-up */
		int left = nccom_left_ms(d);
		if (left <= 0)
			return false; /* its reader names the stall */
		if (k > 0) { /* part of the 8 is in: poll would not wait for the rest */
			(void)usleep(1000);
			continue;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, left) < 0 && errno != EINTR)
			return false;
	}
}

static void serve_extended(struct root_args *a)
{
	int n = a->nranks, lo = a->lo, hi = a->hi, count = hi - lo, cap = 2 * count + 16, nconns = 0, L = a->per_instance;
	bool multi = a->nroots > 1;
	uint32_t size = (uint32_t)record_size(a);
	int64_t tmo = (int64_t)nccom_timeout() * 1000, hb = tmo / 3 > 10 ? tmo / 3 : 10;
	struct xconn *conns = calloc((size_t)cap, sizeof *conns);
	struct xconn **by_rank = calloc((size_t)n, sizeof *by_rank);
	struct extInfoGlobal *rec = calloc((size_t)n, sizeof *rec);
	struct extInfoHier *hrec = calloc((size_t)n, sizeof *hrec);
	struct pollfd *pfd = calloc((size_t)count + 2, sizeof *pfd);
	char reason[BOOTSTRAP_ABORT_TEXT_MAX + 1] = "";
	/* The roots' ring of a multi-root world (root_ring.c): dialed first,
	 * linked once the replies can be made, open until the world is done. */
	struct nccom_root_ring rr = {.nroots = a->nroots, .index = a->index, .lo = lo, .hi = hi, .n = n, .L = L, .global = a->global,
				     .roots = a->roots, .next_fd = -1, .prev_fd = -1};
	bool linked = false;
	struct verdict v = {.gone = ""};
	if (conns == NULL || by_rank == NULL || rec == NULL || hrec == NULL || pfd == NULL) {
		nccom_warn("bootstrap root %s: cannot allocate the tables of %d ranks", a->where, n);
		goto done;
	}
	if (a->global)
		nccom_set_files_limit();
	if (multi && nccom_root_ring_open(&rr) != NRT_SUCCESS)
		snprintf(reason, sizeof reason, "root ring: root %d could not reach the next root %d (its log says why)", a->index, (a->index + 1) % a->nroots);
	/* Phase 1: one record per rank of the range (and the previous root's
	 * range), heartbeats while waiting. */
	int64_t last = nccom_now_ms();
	for (int have = 0; (have < count || (multi && rr.prev_fd < 0)) && !reason[0];) {
		struct pollfd p = {.fd = a->listen_fd, .events = POLLIN};
		int w = poll(&p, 1, (int)hb);
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0) {
			if (nccom_now_ms() - last > tmo) {
				char miss[256];
				missing_list(by_rank, lo, hi, false, miss, sizeof miss);
				if (have == count)
					snprintf(reason, sizeof reason, "root ring: the previous root %d did not connect within %ds (%s)", (a->index - 1 + a->nroots) % a->nroots,
						 nccom_timeout(), ENV_SOCK_TIMEOUT);
				else
					snprintf(reason, sizeof reason, "no INFO_TO_ROOT from %s within %ds (%s): %d of %d ranks arrived", miss, nccom_timeout(), ENV_SOCK_TIMEOUT,
						 have, count);
				break;
			}
			heartbeat(conns, nconns, have, n);
			continue;
		}
		int fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 || nconns == cap) {
			if (fd >= 0)
				nccom_close(&fd);
			continue;
		}
		struct xconn *c = &conns[nconns++];
		*c = (struct xconn){.fd = fd, .rank = -1};
		nccom_addr peer;
		socklen_t len = sizeof peer;
		if (getpeername(fd, &peer.sa, &len) == 0)
			nccom_format_addr(&peer, c->addr, sizeof c->addr);
		char w2[128];
		who(c, w2, sizeof w2);
		if (multi && is_root_conn(fd, nccom_op_deadline())) {
			/* A root is none of the ranks: it hears no ABORT meant for them. */
			struct bootstrap_root_range rg;
			int got = 0;
			nconns--;
			if (rr.prev_fd >= 0)
				snprintf(reason, sizeof reason, "root ring: a second root connection from peer %s", c->addr);
			else if (nccom_recv_frame(fd, &rg, (int)sizeof rg, &got, w2) != NRT_SUCCESS || got != (int)sizeof rg ||
				 nccom_root_ring_take_range(&rr, &fd, &rg, c->addr) != NRT_SUCCESS)
				snprintf(reason, sizeof reason, "root ring: peer %s sent a range this root refused (its log says why)", c->addr);
			nccom_close(&fd);
			continue;
		}
		struct extInfoHier hr;
		memset(&hr, 0, sizeof hr);
		uint32_t type = 0, got = 0;
		if (nccom_recv_msg(fd, &type, &hr, sizeof hr, &got, w2) != NRT_SUCCESS) {
			snprintf(reason, sizeof reason, "%s: its INFO_TO_ROOT record did not arrive whole (see the root's log)", w2);
			c->gone = true;
			break;
		}
		if (type != BOOTSTRAP_MSG_INFO_TO_ROOT || got != size) {
			snprintf(reason, sizeof reason, "%s sent a %u-byte message of type %u, expected a %u-byte INFO_TO_ROOT record (%s)", w2, got, type, size, record_kind(a, (long)got));
			c->gone = true;
			break;
		}
		struct extInfoGlobal r = hr.info;
		admit(a, c, &r, by_rank, n, reason, sizeof reason);
		if (!reason[0] && L > 0) {
			who(c, w2, sizeof w2); /* now with the rank admit took */
			nccom_hier_check(&hr, L, w2, reason, sizeof reason);
		}
		if (!reason[0]) {
			rec[r.info.rank] = r;
			hrec[r.info.rank] = hr;
			have++;
			last = nccom_now_ms();
		}
	}
	if (!reason[0] && a->global)
		git_hash_reason(rec + lo, by_rank + lo, count, reason, sizeof reason);
	/* Phase 2: every rank learns its successor; past the range's end the
	 * next range's first rank, which the roots' ring brings. */
	uint64_t cluster = 0;
	time_t epoch = 0;
	nccl_socket_address_t beyond = rec[lo].info.extAddressListen;
	if (!reason[0] && multi) {
		if (nccom_root_ring_finish(&rr, &rec[lo].info.extAddressListen, &beyond) != NRT_SUCCESS)
			snprintf(reason, sizeof reason, "root ring: root %d's exchange with its neighbour roots failed (its log says why)", a->index);
		cluster = rr.cluster;
		epoch = rr.epoch;
		linked = !reason[0];
	} else if (!reason[0]) {
		new_world(&cluster, &epoch);
	}
	if (linked)
		v.rr = &rr;
	for (int r = lo; r < hi && !reason[0]; r++) {
		struct bootstrap_root_reply reply = reply_for(rec, r, hi, &beyond, cluster, epoch);
		struct bootstrap_root_reply_hier hreply;
		if (L > 0)
			hreply = nccom_hier_reply(hrec, r, n, L, lo, hi, &beyond, cluster, epoch);
		if ((L > 0 ? nccom_send_msg(by_rank[r]->fd, BOOTSTRAP_MSG_INFO_FROM_ROOT, &hreply, sizeof hreply, by_rank[r]->addr)
			   : nccom_send_msg(by_rank[r]->fd, BOOTSTRAP_MSG_INFO_FROM_ROOT, &reply, sizeof reply, by_rank[r]->addr)) != NRT_SUCCESS)
			snprintf(reason, sizeof reason, "peer %s rank %d: INFO_FROM_ROOT not delivered (did its process die?)", by_rank[r]->addr, r);
		else
			by_rank[r]->replied = true;
	}
	if (reason[0])
		goto failed;
	/* Phase 3: stay until every ring is wired — on a multi-root world
	 * every range's: COMPLETE once all R done records are in. */
	if (nccom_fault("root-late")) /* a root descheduled while its ranks fail: it finds them all at once */
		(void)usleep(300 * 1000);
	last = nccom_now_ms();
	bool *done_from = multi ? calloc((size_t)a->nroots, sizeof *done_from) : NULL;
	bool sent_done = false, next_open = true;
	int others = 0;
	if (multi && done_from == NULL) {
		snprintf(reason, sizeof reason, "cannot allocate the roots' table");
		goto failed;
	}
	for (int wired = 0; (wired < count || (multi && others < a->nroots - 1)) && !v.failed && !reason[0];) {
		for (int k = 0; k < count; k++)
			pfd[k] = (struct pollfd){.fd = by_rank[lo + k]->fd, .events = POLLIN};
		pfd[count] = (struct pollfd){.fd = multi ? rr.prev_fd : -1, .events = POLLIN};
		pfd[count + 1] = (struct pollfd){.fd = multi && next_open ? rr.next_fd : -1, .events = POLLIN};
		int w = poll(pfd, (nfds_t)count + 2, (int)hb);
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0) {
			if (nccom_now_ms() - last > 2 * tmo) {
				char miss[256];
				missing_list(by_rank, lo, hi, true, miss, sizeof miss);
				if (wired < count)
					snprintf(reason, sizeof reason, "%s did not report a wired ring within %ds", miss, 2 * nccom_timeout());
				else
					snprintf(reason, sizeof reason, "root ring: %d of the other %d ranges did not report done within %ds", a->nroots - 1 - others, a->nroots - 1,
						 2 * nccom_timeout());
				break;
			}
			heartbeat(conns, nconns, wired, n);
			continue;
		}
		for (int k = 0; k < count && !v.failed; k++) {
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (ring_done(by_rank[lo + k], &v, nccom_op_deadline())) {
				wired++;
				last = nccom_now_ms();
				if (multi && wired == count && !sent_done) {
					sent_done = true;
					if (nccom_root_ring_done(&rr) != NRT_SUCCESS)
						snprintf(reason, sizeof reason, "root ring: root %d's done record did not reach the next root %d", a->index, (a->index + 1) % a->nroots);
				}
			}
		}
		if (!v.failed && !reason[0] && (pfd[count].revents & (POLLIN | POLLHUP | POLLERR))) {
			struct nccom_root_rec rrec;
			if (!read_root_rec(&rr, &rrec, reason, sizeof reason))
				break;
			if (rrec.done && done_from[rrec.origin]) {
				snprintf(reason, sizeof reason, "root ring: the previous root relayed root %d's done record twice (each goes round once)", rrec.origin);
				break;
			}
			if (rrec.done) {
				done_from[rrec.origin] = true;
				others++;
				last = nccom_now_ms();
			} else {
				fold(&v, &rrec);
			}
		}
		if (!v.failed && !reason[0] && (pfd[count + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
			/* The next root's end is its own (done, or failing: its abort
			 * comes round on the previous root's link); a frame on it is
			 * off the protocol. */
			char b;
			ssize_t k = recv(rr.next_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
			if (k > 0)
				snprintf(reason, sizeof reason, "root ring: the next root %d sent a frame on the roots' link it only answers on", (a->index + 1) % a->nroots);
			else if (k == 0 || (errno != EAGAIN && errno != EINTR))
				next_open = false;
		}
	}
	free(done_from);
	if (v.failed)
		explain(by_rank, lo, hi, linked ? &rr : NULL, pfd, &v, tmo, reason, sizeof reason);
	if (reason[0])
		goto failed;
	for (int r = lo; r < hi; r++)
		(void)nccom_send_msg(by_rank[r]->fd, BOOTSTRAP_MSG_COMPLETE, NULL, 0, by_rank[r]->addr); /* a failure is logged; that rank's wait for COMPLETE fails */
	nccom_info("bootstrap root %s: world complete (%d ranks, root %d of %d)", a->where, count, a->index, a->nroots);
	goto done;
failed:
	/* The other roots' ranks hear of it too. */
	if (linked && !v.published && !v.heard)
		nccom_root_ring_publish(&rr, -1, BOOTSTRAP_ROOT_ABORT_REPORT, reason);
	abort_world(a, conns, &nconns, cap, reason);
done:
	nccom_root_ring_close(&rr);
	if (conns != NULL)
		for (int i = 0; i < nconns; i++)
			nccom_close(&conns[i].fd);
	free(conns);
	free(by_rank);
	free(rec);
	free(hrec);
	free(pfd);
	nccom_close(&a->listen_fd);
}

static void *root_thread(void *p)
{
	struct root_args *a = p;
	if (nccom_extended())
		serve_extended(a);
	else
		serve(a);
	free(a->roots);
	free(a);
	return NULL;
}

/* The root thread of a (not yet listening) a, at *addr. */
static NRT_STATUS start_root(struct root_args *a, nccom_addr *addr, bool from_env, pthread_t *join);

/* The checks of bootstrapCreateRoot and the args of a world of nranks. */
static NRT_STATUS root_args_new(int nranks, bool global, struct root_args **out)
{
	uint32_t vnc = 0;
	NRT_STATUS rc = nrt_get_total_vnc_count(&vnc); /* reverse leg: the regime */
	if (rc != NRT_SUCCESS)
		return rc;
	if (vnc != 0) {
		nccom_warn("bootstrapCreateRoot: nrt_get_total_vnc_count() reports %u: a single-vNC process has no world to serve", vnc);
		return NRT_INVALID;
	}
	if (nranks < 1 || nranks > BOOTSTRAP_MAX_RANKS) {
		nccom_warn("bootstrap root: a world of %d ranks; give 1..%d", nranks, BOOTSTRAP_MAX_RANKS);
		return NRT_INVALID;
	}
	int L = 0;
	if ((rc = nccom_per_instance(&L)) != NRT_SUCCESS)
		return rc;
	struct root_args *a = calloc(1, sizeof *a);
	if (a == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	a->nranks = nranks;
	a->global = global;
	a->per_instance = nccom_hierarchical(global, nranks, L) ? L : 0;
	a->listen_fd = -1;
	*out = a;
	return NRT_SUCCESS;
}

static NRT_STATUS start_root(struct root_args *a, nccom_addr *addr, bool from_env, pthread_t *join)
{
	NRT_STATUS rc;
	int nranks = a->nranks;
	bool global = a->global;
	if ((rc = nccom_listen(addr, &a->listen_fd)) != NRT_SUCCESS) {
		free(a->roots);
		free(a);
		return rc;
	}
	nccom_format_addr(addr, a->where, sizeof a->where);
	if (from_env)
		nccom_info(NRTABI_MSG_NCCOM_ROOT_FROM_ENV, a->where);
	nccom_info("bootstrap root %s: %d ranks, isGlobalInit=%d, %s", a->where, nranks, (int)global,
		   a->per_instance > 0 ? "hierarchical" : "flat");
	pthread_attr_t attr;
	pthread_t th;
	int e = pthread_attr_init(&attr);
	if (e == 0)
		e = pthread_attr_setdetachstate(&attr, join != NULL ? PTHREAD_CREATE_JOINABLE : PTHREAD_CREATE_DETACHED);
	if (e == 0)
		e = pthread_create(&th, &attr, root_thread, a);
	if (e == 0 && join != NULL)
		*join = th;
	if (pthread_attr_destroy(&attr) != 0)
		nccom_warn("pthread_attr_destroy failed");
	if (e != 0) {
		nccom_warn("bootstrap root: pthread_create: %s", strerror(e));
		nccom_close(&a->listen_fd);
		free(a->roots);
		free(a);
		return NRT_FAILURE;
	}
	return NRT_SUCCESS;
}

NRT_STATUS nccom_create_root(nccom_addr *addr, int nranks, bool global, bool from_env, pthread_t *join)
{
	struct root_args *a = NULL;
	NRT_STATUS rc = root_args_new(nranks, global, &a);
	if (rc != NRT_SUCCESS)
		return rc;
	a->nroots = 1;
	a->hi = nranks;
	return start_root(a, addr, from_env, join);
}

NRT_STATUS nccom_create_root_of(const struct nccom_roots *roots, int index, int nranks, bool global, pthread_t *join)
{
	struct root_args *a = NULL;
	NRT_STATUS rc = root_args_new(nranks, global, &a);
	if (rc != NRT_SUCCESS)
		return rc;
	int L = a->per_instance;
	if ((rc = nccom_roots_check(roots->n, nranks, L, global)) != NRT_SUCCESS || (a->roots = calloc((size_t)roots->n, sizeof *a->roots)) == NULL) {
		free(a);
		return rc != NRT_SUCCESS ? rc : NRT_FAIL_HOST_MEM_ALLOC;
	}
	memcpy(a->roots, roots->addr, (size_t)roots->n * sizeof *a->roots);
	a->nroots = roots->n;
	a->index = index;
	nccom_root_range(index, roots->n, nranks, L, global, &a->lo, &a->hi);
	nccom_addr at = roots->addr[index];
	nccom_info("bootstrap root %d of %d: ranks %d..%d", index, roots->n, a->lo, a->hi - 1);
	return start_root(a, &at, true, join);
}
