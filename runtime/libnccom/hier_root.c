/*
 * The root's part of the hierarchical bootstrap (bootstrapRootWithHierarchy,
 * docs/sources.md#s001-3 Considerations): root.c takes the records and
 * speaks both framings as for the flat world; here is what differs, the
 * instance shape each record must fit and the reply each rank gets
 * (docs/bootstrap-hierarchy.md).
 */
#include <stdio.h>
#include <string.h>

#include "nccom.h"

void nccom_hier_check(const struct extInfoHier *rec, int L, const char *who, char *reason, size_t len)
{
	int r = rec->info.info.rank;
	/* The texts of runtime/transport/tcp's root, so either root names a
	 * fault alike (docs/bootstrap-hierarchy.md#the-root). */
	if (rec->per_instance != (uint32_t)L)
		snprintf(reason, len, "%s reports per_instance %u, the root %d: set %s (or --per-instance) alike on every rank and the root", who,
			 rec->per_instance, L, ENV_BOOTSTRAP_PER_INSTANCE);
	else if (rec->instance != (uint32_t)(r / L))
		snprintf(reason, len, "%s claims instance %u, but rank %d with per_instance %d is in instance %d: a rank in the wrong instance", who,
			 rec->instance, r, L, r / L);
}

struct bootstrap_root_reply_hier nccom_hier_reply(const struct extInfoHier *rec, int r, int n, int L, int lo, int hi, const nccl_socket_address_t *beyond,
						  uint64_t cluster, time_t epoch)
{
	struct bootstrap_root_reply_hier reply;
	memset(&reply, 0, sizeof reply);
	int h = r / L, local = r % L, H = nccom_hier_ninstances(n, L), ln = nccom_hier_local_n(n, L, h);
	reply.cluster_id = cluster;
	reply.epoch = epoch;
	reply.intra_next = rec[h * L + (local + 1) % ln].info.info.extAddressListen;
	/* Only a leader has an inter-ring neighbour; a non-leader's stays all
	 * zero (family 0), so using it is refused as no address. */
	int next_leader = ((h + 1) % H) * L;
	if (local == 0)
		reply.inter_next = next_leader >= lo && next_leader < hi ? rec[next_leader].info.info.extAddressListen : *beyond;
	reply.instance = (uint32_t)h;
	reply.ninstances = (uint32_t)H;
	reply.local_rank = (uint32_t)local;
	reply.local_n = (uint32_t)ln;
	return reply;
}
