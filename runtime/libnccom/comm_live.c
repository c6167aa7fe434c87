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
