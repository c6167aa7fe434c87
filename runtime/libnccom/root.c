/*
 * The bootstrap root (bootstrapCreateRoot + bootstrapRootFlat, seed 001 §3
 * and §5): a detached thread that takes one INFO_TO_ROOT record per rank,
 * validates the world (magic, rank count, duplicates, and on a global init
 * the git-hash tags), then answers every rank INFO_FROM_ROOT on the fd it
 * came in on and closes it. On a bad world it closes every connection, so
 * each waiting rank fails at once instead of at its timeout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>

#include "nccom.h"

/* The seed's 140-byte root-args block holds the listen fd, the world size and
 * flags; ours says what the thread needs. */
struct root_args {
	int listen_fd, nranks;
	bool global;
	char where[80];
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

static void tag_text(const nccl_nrt_git_hash_t *h, char *out, size_t n)
{
	snprintf(out, n, "libnccom \"%.*s\" + libnrt \"%.*s\"", (int)strnlen(h->nccom, sizeof h->nccom), h->nccom,
		 (int)strnlen(h->nrt, sizeof h->nrt), h->nrt);
}

/* The most common tag wins; ties go to the lowest rank. 0 or the odd rank + 1. */
static int odd_tag(const struct extInfoGlobal *rec, int n, int *ref)
{
	int best = 0, best_count = 0;
	for (int i = 0; i < n; i++) {
		int c = 0;
		for (int j = 0; j < n; j++)
			c += memcmp(&rec[i].nccl_nrt_git_hash, &rec[j].nccl_nrt_git_hash, sizeof(nccl_nrt_git_hash_t)) == 0;
		if (c > best_count) {
			best = i;
			best_count = c;
		}
	}
	*ref = best;
	for (int i = 0; i < n; i++)
		if (memcmp(&rec[i].nccl_nrt_git_hash, &rec[best].nccl_nrt_git_hash, sizeof(nccl_nrt_git_hash_t)) != 0)
			return i + 1;
	return 0;
}

static void serve(struct root_args *a)
{
	int n = a->nranks;
	int size = a->global ? (int)sizeof(struct extInfoGlobal) : (int)sizeof(struct extInfo);
	struct extInfoGlobal *rec = calloc((size_t)n, sizeof *rec);
	int *fds = malloc((size_t)n * sizeof *fds);
	if (rec == NULL || fds == NULL) {
		nccom_warn("bootstrap root %s: cannot allocate the tables of %d ranks", a->where, n);
		goto done;
	}
	for (int i = 0; i < n; i++)
		fds[i] = -1;
	if (a->global)
		nccom_set_files_limit();
	for (int have = 0; have < n;) {
		int fd = -1;
		char what[128];
		snprintf(what, sizeof what, "rank %d of %d at the root %s", have, n, a->where);
		if (nccom_accept(a->listen_fd, &fd, "the next rank's INFO_TO_ROOT") != NRT_SUCCESS)
			goto done;
		nccom_addr peer;
		socklen_t len = sizeof peer;
		char ptext[80] = "?";
		if (getpeername(fd, &peer.sa, &len) == 0)
			nccom_format_addr(&peer, ptext, sizeof ptext);
		struct extInfoGlobal r;
		memset(&r, 0, sizeof r);
		int got = 0;
		if (nccom_recv_frame(fd, &r, size, &got, ptext) != NRT_SUCCESS) {
			nccom_close(&fd);
			goto done;
		}
		if (got != size) {
			nccom_warn("Bootstrap Root : peer %s sent a %d-byte extInfo, expected %d (%s)", ptext, got, size,
				   a->global ? "extInfo + nccl_nrt_git_hash, a global init" : "extInfo");
			nccom_close(&fd);
			goto done;
		}
		if (r.info.sanity != BOOTSTRAP_SANITY) {
			nccom_warn(NRTABI_MSG_NCCOM_ROOT_BAD_SANITY, r.info.sanity, ptext, BOOTSTRAP_SANITY);
			nccom_close(&fd);
			goto done;
		}
		if (r.info.nranks != n) {
			nccom_warn(NRTABI_MSG_NCCOM_ROOT_NRANKS_MISMATCH, n, r.info.nranks);
			nccom_close(&fd);
			goto done;
		}
		if (r.info.rank < 0 || r.info.rank >= n || fds[r.info.rank] >= 0) {
			nccom_warn(NRTABI_MSG_NCCOM_ROOT_ALREADY_CHECKED_IN, r.info.rank, n);
			nccom_close(&fd);
			goto done;
		}
		rec[r.info.rank] = r;
		fds[r.info.rank] = fd;
		have++;
	}
	int ref = 0, odd = a->global ? odd_tag(rec, n, &ref) : 0;
	if (odd) {
		char t1[64], t2[64];
		tag_text(&rec[odd - 1].nccl_nrt_git_hash, t1, sizeof t1);
		tag_text(&rec[ref].nccl_nrt_git_hash, t2, sizeof t2);
		nccom_warn(NRTABI_MSG_NCCOM_ROOT_GIT_HASH_MISMATCH, odd - 1, t1, ref, t2);
		goto done;
	}
	uint64_t cluster = 0;
	if (getrandom(&cluster, sizeof cluster, 0) != (ssize_t)sizeof cluster)
		cluster = (uint64_t)time(NULL) * 2654435761u;
	time_t epoch = time(NULL);
	for (int r = 0; r < n; r++) {
		struct bootstrap_root_reply reply;
		memset(&reply, 0, sizeof reply);
		reply.cluster_id = cluster;
		reply.epoch = epoch;
		reply.neighbour = rec[(r + 1) % n].info.extAddressListen;
		char who[32];
		snprintf(who, sizeof who, "rank %d", r);
		if (nccom_send_frame(fds[r], &reply, (int)sizeof reply, who) != NRT_SUCCESS)
			goto done; /* that rank is gone; the rest fail on the broken ring */
		nccom_close(&fds[r]);
	}
	nccom_info("bootstrap root %s: %d ranks answered", a->where, n);
done:
	if (fds != NULL)
		for (int i = 0; i < n; i++)
			nccom_close(&fds[i]);
	free(fds);
	free(rec);
	nccom_close(&a->listen_fd);
}

static void *root_thread(void *p)
{
	struct root_args *a = p;
	serve(a);
	free(a);
	return NULL;
}

NRT_STATUS nccom_create_root(nccom_addr *addr, int nranks, bool global, bool from_env)
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
	struct root_args *a = calloc(1, sizeof *a);
	if (a == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	a->nranks = nranks;
	a->global = global;
	if ((rc = nccom_listen(addr, &a->listen_fd)) != NRT_SUCCESS) {
		free(a);
		return rc;
	}
	nccom_format_addr(addr, a->where, sizeof a->where);
	if (from_env)
		nccom_info(NRTABI_MSG_NCCOM_ROOT_FROM_ENV, a->where);
	pthread_attr_t attr;
	pthread_t th;
	int e = pthread_attr_init(&attr);
	if (e == 0)
		e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (e == 0)
		e = pthread_create(&th, &attr, root_thread, a);
	if (pthread_attr_destroy(&attr) != 0)
		nccom_warn("pthread_attr_destroy failed");
	if (e != 0) {
		nccom_warn("bootstrap root: pthread_create: %s", strerror(e));
		nccom_close(&a->listen_fd);
		free(a);
		return NRT_FAILURE;
	}
	return NRT_SUCCESS;
}
