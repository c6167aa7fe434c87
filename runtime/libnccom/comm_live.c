/*
 * The registry of the comms this library allocated: ncclCommInitRank
 * registers each with what the seed keeps in places whose offsets are not
 * documented (the all-gathered peer records and a global init's maps,
 * docs/sources.md#s001-3), neuronFreeComm takes it out, and every export
 * that takes a comm asks here first, so a pointer the library never handed
 * out is refused (NRT_INVALID) instead of read. The net layer (net_conn.c,
 * net_proxy.c) and comm.c all sit above it; it calls none of them.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nccom.h"

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nccom_live *live_list;

static struct nccom_live *find_live(const void *comm)
{
	for (struct nccom_live *l = live_list; l; l = l->next)
		if (l->comm == comm)
			return l;
	return NULL;
}

NRT_STATUS nccom_comm_register(struct nccom_live *l)
{
	if (pthread_mutex_lock(&live_mu) != 0)
		return NRT_FAILURE;
	l->next = live_list;
	live_list = l;
	if (pthread_mutex_unlock(&live_mu) != 0)
		nccom_warn("comm registry: unlock failed");
	return NRT_SUCCESS;
}

struct nccom_live *nccom_comm_unregister(const void *comm)
{
	if (comm == NULL || pthread_mutex_lock(&live_mu) != 0)
		return NULL;
	struct nccom_live **p = &live_list;
	while (*p && (*p)->comm != comm)
		p = &(*p)->next;
	struct nccom_live *l = *p;
	if (l != NULL)
		*p = l->next;
	if (pthread_mutex_unlock(&live_mu) != 0)
		nccom_warn("comm registry: unlock failed");
	return l;
}

bool nccom_comm_live(const void *comm)
{
	if (comm == NULL || pthread_mutex_lock(&live_mu) != 0)
		return false;
	bool ok = find_live(comm) != NULL;
	if (pthread_mutex_unlock(&live_mu) != 0)
		return false;
	return ok;
}

NRT_STATUS nccom_comm_rank(void *comm, int *rank, int *nranks)
{
	if (!nccom_comm_live(comm))
		return NRT_INVALID;
	const struct ncclComm *c = comm;
	*rank = c->rank;
	*nranks = c->nRanks;
	return NRT_SUCCESS;
}

int nccom_comm_world(int nranks, const uint64_t *cluster, const time_t *epoch, struct ncclComm **world, struct ncclPeerInfo **peers)
{
	if (pthread_mutex_lock(&live_mu) != 0)
		return -1;
	const struct nccom_live *found = NULL;
	int n = 0;
	for (const struct nccom_live *l = live_list; l; l = l->next) {
		const struct ncclComm *c = l->comm;
		if (l->world != NULL || !c->isGlobalComm || c->bootstrap == NULL || c->nRanks != nranks)
			continue;
		if (cluster != NULL && (c->cluster_id != *cluster || c->epoch != *epoch))
			continue;
		found = l;
		n++;
	}
	int rc = n == 0 ? 0 : n > 1 ? 2 : 1;
	if (rc == 1) {
		*world = found->comm;
		if (peers != NULL) {
			*peers = malloc((size_t)nranks * sizeof **peers);
			if (*peers == NULL)
				rc = -1;
			else
				memcpy(*peers, found->peers, (size_t)nranks * sizeof **peers);
		}
	}
	if (pthread_mutex_unlock(&live_mu) != 0)
		nccom_warn("comm registry: unlock failed");
	return rc;
}

struct nccom_bootstrap *nccom_comm_bootstrap(const void *comm)
{
	if (comm == NULL || pthread_mutex_lock(&live_mu) != 0)
		return NULL;
	struct nccom_bootstrap *b = NULL;
	const struct nccom_live *l = find_live(comm);
	if (l != NULL && l->world == NULL)
		b = l->comm->bootstrap;
	else if (l != NULL && find_live(l->world) != NULL)
		b = l->world->bootstrap;
	if (pthread_mutex_unlock(&live_mu) != 0)
		return NULL;
	return b;
}

bool nccom_comm_peer_mla(const void *comm, int peer, int *mla, int *dev)
{
	if (comm == NULL || pthread_mutex_lock(&live_mu) != 0)
		return false;
	const struct nccom_live *l = find_live(comm);
	*mla = -1;
	*dev = 0;
	if (l != NULL && peer >= 0 && peer < l->comm->nRanks) {
		*mla = l->peers[peer].mla_idx;
		*dev = l->comm->cudaDev;
	}
	if (pthread_mutex_unlock(&live_mu) != 0)
		return false;
	return *mla >= 0;
}
