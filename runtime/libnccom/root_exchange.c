/*
 * A rank's exchange with the bootstrap root (docs/sources.md#s001-3), the
 * same for the flat join (bootstrap.c) and the hierarchical one
 * (hier_rank.c): this rank's INFO_TO_ROOT record, the stagger before it
 * connects, and INFO_TO_ROOT / INFO_FROM_ROOT on one connection, kept open
 * in the extended framing until COMPLETE.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nccom.h"

NRT_STATUS nccom_fill_info(const struct nccom_bootstrap *b, const nccom_addr *me, bool global, struct extInfoGlobal *info)
{
	memset(info, 0, sizeof *info);
	info->info.sanity = BOOTSTRAP_SANITY;
	info->info.rank = b->st.rank;
	info->info.nranks = b->st.nranks;
	memcpy(&info->info.extAddressListen, me, sizeof info->info.extAddressListen);
	return global ? nccom_git_hash(&info->nccl_nrt_git_hash) : NRT_SUCCESS;
}

/* How long a rank waits before it connects to the root, so that a large
 * world's connects do not all reach the root at once. Flat: upstream
 * 2.9.9's rank ms over BOOTSTRAP_DELAY_CONNECT_RANKS ranks. Hierarchical
 * (not in 2.9.9): the stagger of the upstream that serves large worlds,
 * rank/BOOTSTRAP_HIER_STAGGER_RATE s past BOOTSTRAP_HIER_STAGGER_THRESHOLD
 * ranks (docs/bootstrap-hierarchy.md#stagger); the Go side's connectDelay. */
long long nccom_connect_delay_ns(bool hier, int rank, int nranks)
{
	if (hier)
		return nranks > BOOTSTRAP_HIER_STAGGER_THRESHOLD ? (long long)rank * 1000000000LL / BOOTSTRAP_HIER_STAGGER_RATE : 0;
	return nranks > BOOTSTRAP_DELAY_CONNECT_RANKS ? (long long)rank * 1000000LL : 0;
}

/* Sleeps ns, resumed after a signal so the stagger is whole. */
static NRT_STATUS stagger(long long ns)
{
	struct timespec d = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
	while (nanosleep(&d, &d) != 0) {
		if (errno != EINTR) {
			nccom_warn("bootstrap: the stagger before connecting to the root: nanosleep: %s", strerror(errno));
			return NRT_FAILURE;
		}
	}
	return NRT_SUCCESS;
}

/* INFO_TO_ROOT, then INFO_FROM_ROOT on the same fd, then close (docs/sources.md#s001-3). */
NRT_STATUS nccom_root_exchange(struct nccom_bootstrap *b, const nccom_addr *root, bool hier, const void *rec, int size, void *reply, int reply_size)
{
	int r = b->st.rank - b->range_lo, n = b->range_n;
	long long ns = nccom_connect_delay_ns(hier, r, n);
	NRT_STATUS rc;
	if (ns > 0 && (rc = stagger(ns)) != NRT_SUCCESS)
		return rc;
	char where[96], text[80];
	nccom_format_addr(root, text, sizeof text);
	snprintf(where, sizeof where, "the root %s", text);
	snprintf(b->root_name, sizeof b->root_name, "%s", where);
	int fd = -1;
	if ((rc = nccom_connect(root, &fd, nccom_op_deadline())) != NRT_SUCCESS)
		return rc;
	rc = nccom_send_data(fd, BOOTSTRAP_MSG_INFO_TO_ROOT, rec, size, where);
	/* The root cannot answer before the world's last rank has connected:
	 * the stagger still to come joins the three timeouts heartbeats may
	 * fill (nccom_recv_want_by), as on the Go side (replyWithin). */
	long long rest = nccom_connect_delay_ns(hier, n - 1, n) - ns;
	if (rc == NRT_SUCCESS && nccom_extended())
		rc = nccom_recv_want_by(fd, BOOTSTRAP_MSG_INFO_FROM_ROOT, reply, (uint32_t)reply_size, where,
					nccom_now_ms() + 3 * (int64_t)nccom_timeout() * 1000 + rest / 1000000LL);
	else if (rc == NRT_SUCCESS)
		rc = nccom_recv_data(fd, BOOTSTRAP_MSG_INFO_FROM_ROOT, reply, reply_size, where);
	if (rc == NRT_SUCCESS && nccom_extended())
		b->root_fd = fd; /* kept until COMPLETE */
	else
		nccom_close(&fd);
	return rc;
}
