/*
 * ncclCommInitRank and what hangs off a comm (docs/sources.md#s001-1): the unique
 * id, the 19240-byte ncclComm with its satellites at the spec's offsets,
 * initTransportsRank (bootstrap + the 112-byte peer-info all-gather),
 * neuronGetCommInfo, neuronFreeComm and the bootstrap and peer exports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>
#include <unistd.h>

#include "nccom.h"

_Static_assert(sizeof(struct ncclComm) == 0x4B28, "commAlloc callocs 19240 bytes (docs/sources.md#s001-2)");
_Static_assert(sizeof(struct ncclPeerInfo) == 112, "the peer-info record is 112 bytes (docs/sources.md#s001-3)");

/* getHash: upstream NCCL 2.9's DJB2a (h = h*33 ^ c from 5381), each byte
 * read as a char, which x86-64 sign-extends: bytes of 0x80 and up XOR in
 * all-ones high bits (contradiction row peer-record-hosthash). The Go
 * transport's tcp.GetHash is the same function. */
static uint64_t get_hash(const char *s, size_t n)
{
	uint64_t h = 5381;
	for (size_t i = 0; i < n; i++)
		h = ((h << 5) + h) ^ (uint64_t)(int64_t)(signed char)s[i];
	return h;
}

/* The identity strings are built in upstream's 1024-byte buffers, so both
 * sides cut them at the same length. */
#define NCCOM_HASH_BUF 1024

/* getHostHash (upstream 2.9): the hostname, then the first word of the
 * kernel's boot id, hashed (contradiction row peer-record-hosthash). */
static uint64_t host_hash(void)
{
	char buf[NCCOM_HASH_BUF] = {0};
	if (gethostname(buf, sizeof buf - 1) != 0)
		snprintf(buf, sizeof buf, "unknown");
	size_t off = strlen(buf);
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f != NULL) {
		char word[NCCOM_HASH_BUF];
		if (fscanf(f, "%1023s", word) == 1) {
			size_t n = strlen(word);
			if (n > sizeof buf - 1 - off)
				n = sizeof buf - 1 - off;
			memcpy(buf + off, word, n);
			buf[off + n] = 0;
		}
		if (fclose(f) != 0)
			nccom_warn("getHostHash: closing the boot id failed");
	}
	return get_hash(buf, strlen(buf));
}

/* getPidHash (upstream 2.9, which seed 001 §3 names): the decimal pid, then
 * the target of /proc/self/ns/pid, hashed (contradiction row
 * peer-record-pidhash; no longer getpid() itself). */
static uint64_t pid_hash(void)
{
	char buf[NCCOM_HASH_BUF];
	int n = snprintf(buf, sizeof buf, "%ld", (long)getpid());
	if (n < 0)
		n = 0;
	ssize_t l = readlink("/proc/self/ns/pid", buf + n, sizeof buf - 1 - (size_t)n);
	if (l < 0)
		l = 0;
	buf[n + l] = 0;
	return get_hash(buf, strlen(buf));
}

/* neuronIsUltraServer(pod_type), whose body no seed traces: an UltraServer
 * is a pod of instances, P2P or switched (contradiction row
 * global-init-maps). */
static bool is_ultra_server(nec_pod_type_t pod_type)
{
	return pod_type == NEC_POD_TYPE_P2P || pod_type == NEC_POD_TYPE_SWITCH;
}

/* n ints as "a,b,c", at most max of them ("..." after), within cap. */
static const char *int_list(const int *v, int n, int max, char *out, size_t cap)
{
	size_t k = 0;
	out[0] = 0;
	for (int i = 0; i < n && k + 16 < cap; i++) {
		if (i == max) {
			snprintf(out + k, cap - k, ",...");
			break;
		}
		int w = snprintf(out + k, cap - k, i ? ",%d" : "%d", v[i]);
		if (w < 0)
			break;
		k += (size_t)w;
	}
	return out;
}

static void comm_free(struct ncclComm *c)
{
	if (c == NULL)
		return;
	nccom_bootstrap_close(c->bootstrap);
	free((void *)c->abortFlag);
	free(c->asyncOps);
	free(c->connectSend);
	free(c->connectRecv);
	free(c->p2pSends);
	free(c->p2pRecvs);
	free(c);
}

/* commAlloc (ncclCommInitRankSync): the comm and its satellites. */
static NRT_STATUS comm_alloc(struct ncclComm **out, int nranks, int rank, const enc_neuron_device_info_t *dev)
{
	struct ncclComm *c = calloc(1, sizeof *c);
	if (c == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	c->rank = rank;
	c->nRanks = nranks;
	c->cudaDev = dev->nec_dev_id;
	c->net_conn = ENC_CONNECTIVITY_DEFAULT;
	c->busId = 0; /* getBusId has no Neuron counterpart among the callbacks */
	c->abortFlag = calloc(1, sizeof *c->abortFlag);
	c->asyncOps = calloc(NCCL_ASYNC_OPS_COUNT, sizeof(struct ncclInfo));
	c->connectSend = calloc((size_t)nranks, 4);
	c->connectRecv = calloc((size_t)nranks, 4);
	c->p2pSends = calloc((size_t)nranks, 16);
	c->p2pRecvs = calloc((size_t)nranks, 16);
	if (c->abortFlag == NULL || c->asyncOps == NULL || c->connectSend == NULL || c->connectRecv == NULL ||
	    c->p2pSends == NULL || c->p2pRecvs == NULL) {
		comm_free(c);
		return NRT_FAIL_HOST_MEM_ALLOC;
	}
	if (dev->histogram_config.enable)
		nccom_info("comm rank %d: histogram telemetry is not provided by the reference libnccom (send_histograms stays NULL)", rank);
	*out = c;
	return NRT_SUCCESS;
}

/* fillInfo: this rank's 112-byte record, every field from the seed's rule
 * (docs/libnccom.md#the-peer-record); the Go transport's tcp.PeerRecord
 * fills the same bytes from the same inputs. */
static void fill_peer(struct ncclPeerInfo *me, struct ncclComm *c, uint64_t id_hash, const enc_neuron_device_info_t *dev)
{
	me->rank = c->rank;
	me->cudaDev = c->cudaDev; /* ncclRtGetDevice: the device ncclRtSetDevice(dev->nec_dev_id) selected */
	me->hostHash = host_hash() + id_hash + dev->virtual_server_id;
	me->pidHash = pid_hash() + id_hash;
	me->comm = c;
	/* ncclCudaCompCap() is "capcc | host_device_id" and there is no CUDA
	 * capability: host_device_id alone (contradiction row peer-record-fill). */
	me->compCap = dev->host_device_id;
	me->mla_idx = dev->mla_idx;
}

/* The global init's maps from the gathered records (seed 001 §3): the MLA
 * of every rank, and its host device id, carried in compCap since
 * host_dev_id's own offset is undocumented (contradiction row
 * global-init-maps); then neuronIsUltraServer(dev->pod_type). */
static NRT_STATUS build_global_maps(const struct ncclPeerInfo *all, int n, const enc_neuron_device_info_t *dev, int rank,
				    struct nccom_global_maps *m)
{
	m->mla_indexes = calloc((size_t)n, sizeof(int));
	m->host_device_ids = calloc((size_t)n, sizeof(int));
	if (m->mla_indexes == NULL || m->host_device_ids == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	for (int r = 0; r < n; r++) {
		m->mla_indexes[r] = all[r].mla_idx;
		m->host_device_ids[r] = all[r].compCap;
	}
	m->ultra_server = is_ultra_server(dev->pod_type);
	m->built = true;
	char mla[512], hdi[512];
	nccom_info("initTransportRank: rank %d global init maps: mla_indexes %s host_device_ids %s pod_type %u ultraserver %d", rank,
		   int_list(m->mla_indexes, n, 32, mla, sizeof mla), int_list(m->host_device_ids, n, 32, hdi, sizeof hdi),
		   (unsigned)dev->pod_type, m->ultra_server ? 1 : 0);
	return NRT_SUCCESS;
}

static void free_global_maps(struct nccom_global_maps *m)
{
	free(m->mla_indexes);
	free(m->host_device_ids);
	*m = (struct nccom_global_maps){0};
}

/* initTransportsRank up to the topology stage, which this library leaves out. */
static NRT_STATUS init_transports(struct ncclComm *c, const struct ncclUniqueId *id, const enc_neuron_device_info_t *dev,
				  bool global, struct ncclPeerInfo **peers_out, struct nccom_global_maps *maps)
{
	c->isGlobalComm = global;
	uint64_t h = get_hash(id->internal, sizeof id->internal);
	struct nccom_bootstrap *b = NULL;
	NRT_STATUS rc = nccom_bootstrap_init(id, c->rank, c->nRanks, global, &b, &c->cluster_id, &c->epoch);
	if (rc != NRT_SUCCESS)
		return rc;
	c->bootstrap = b;
	struct ncclPeerInfo *all = calloc((size_t)c->nRanks, sizeof *all);
	if (all == NULL)
		return NRT_FAIL_HOST_MEM_ALLOC;
	struct ncclPeerInfo *me = &all[c->rank];
	fill_peer(me, c, h, dev);
	if (b != NULL && (rc = nccom_bootstrap_allgather_records(b, all, (int)sizeof *all, offsetof(struct ncclPeerInfo, rank), NCCOM_PHASE_PEERS)) != NRT_SUCCESS) {
		nccom_warn("initTransportRank AllGather1 failed (rank %d of %d)", c->rank, c->nRanks);
		free(all);
		return rc;
	}
	/* Every rank of a world gathers the same two tables, flat or
	 * hierarchical: their digests let a test compare them across processes,
	 * and this rank's own record, with the process-local inputs it was made
	 * from, lets it recompute the record (runtime/e2e peerrecord_test.go). */
	if (b != NULL) {
		nccom_info("initTransportRank: rank %d of %d gathered tables: addresses %016llx peers %016llx (%s)", c->rank, c->nRanks,
			   (unsigned long long)get_hash((const char *)b->st.peerCommAddresses, (size_t)c->nRanks * sizeof(nccl_socket_address_t)),
			   (unsigned long long)get_hash((const char *)all, (size_t)c->nRanks * sizeof *all), b->per_instance > 0 ? "hierarchical" : "flat");
		char hex[2 * sizeof *me + 1];
		const unsigned char *p = (const unsigned char *)&all[c->rank];
		for (size_t i = 0; i < sizeof *me; i++)
			snprintf(hex + 2 * i, 3, "%02x", p[i]);
		nccom_info("initTransportRank: rank %d peer record pid %ld comm %p: %s", c->rank, (long)getpid(), (void *)c, hex);
	}
	if (global && (rc = build_global_maps(all, c->nRanks, dev, c->rank, maps)) != NRT_SUCCESS) {
		free_global_maps(maps);
		free(all);
		return rc;
	}
	*peers_out = all;
	return NRT_SUCCESS;
}

/* ncclGetUniqueId's id for a root comm id or, without one, a fresh root here.
 * That root is bootstrapGetUniqueId's, created with isGlobalInit = 0 whoever
 * asks, neuronInitGlobalComm included (docs/sources.md#s001-5). */
static NRT_STATUS unique_id(const char *root_id, int nranks, struct ncclUniqueId *id, bool *from_env)
{
	memset(id, 0, sizeof *id);
	nccom_addr a;
	*from_env = root_id != NULL && root_id[0] != 0;
	if (*from_env) {
		if (!nccom_parse_addr(root_id, &a)) {
			nccom_warn(NRTABI_MSG_NCCOM_INVALID_COMM_ID, root_id);
			return NCCOM_INVALID_ARGUMENT;
		}
		nccom_info(NRTABI_MSG_NCCOM_ROOT_ID_FROM_ENV, root_id);
		NRT_STATUS rc = nccom_net_init(&a);
		if (rc != NRT_SUCCESS)
			return rc;
	} else {
		NRT_STATUS rc = nccom_net_init(NULL);
		if (rc != NRT_SUCCESS)
			return rc;
		a = nccom_if_addr();
		if ((rc = nccom_create_root(&a, nranks, false, false, NULL)) != NRT_SUCCESS)
			return rc;
	}
	memcpy(id->internal, &a, sizeof a);
	return NRT_SUCCESS;
}

static NRT_STATUS comm_init_rank_sync(void **newcomm, int nranks, int rank, const enc_neuron_device_info_t *dev, bool global,
				      const struct ncclUniqueId *idp);

static NRT_STATUS comm_init_rank(const char *root_id, void **newcomm, int nranks, int rank, const enc_neuron_device_info_t *dev,
				 bool global, struct ncclUniqueId id)
{
	NRT_STATUS rc;
	pthread_t root;
	bool serving = root_id != NULL && root_id[0] != 0 && rank == 0;
	/* Several roots (NRTABI_BOOTSTRAP_ROOTS, a global init): the first rank
	 * of each range serves its root (docs/bootstrap-hierarchy.md#wire-at-scale). */
	struct nccom_roots roots = {0};
	if (global && root_id != NULL && root_id[0] != 0 && (rc = nccom_roots_get(&roots)) != NRT_SUCCESS)
		return rc;
	if (roots.n > 0) {
		int L = 0, lo = 0, hi = 0, i = 0;
		if ((rc = nccom_per_instance(&L)) != NRT_SUCCESS || (rc = nccom_roots_check(roots.n, nranks, L, global)) != NRT_SUCCESS) {
			nccom_roots_free(&roots);
			return rc;
		}
		i = nccom_root_of(rank, roots.n, nranks, L, global);
		nccom_root_range(i, roots.n, nranks, L, global, &lo, &hi);
		serving = rank == lo;
		rc = serving ? (roots.n > 1 ? nccom_create_root_of(&roots, i, nranks, global, &root) : nccom_create_root(&roots.addr[0], nranks, global, true, &root))
			     : NRT_SUCCESS;
		nccom_roots_free(&roots);
		if (rc != NRT_SUCCESS)
			return rc;
	} else if (serving) {
		nccom_addr a;
		memcpy(&a, id.internal, sizeof a);
		if ((rc = nccom_create_root(&a, nranks, global, true, &root)) != NRT_SUCCESS)
			return rc;
	}
	rc = comm_init_rank_sync(newcomm, nranks, rank, dev, global, &id);
	/* The root outlives this rank's own failure until the others have heard
	 * of it (its linger is bounded by the socket timeout). */
	if (serving && pthread_join(root, NULL) != 0)
		nccom_warn("bootstrap root: pthread_join failed");
	return rc;
}

/* ncclCommInitRank after the root: banner, checks, commAlloc, transports. */
static NRT_STATUS comm_init_rank_sync(void **newcomm, int nranks, int rank, const enc_neuron_device_info_t *dev, bool global,
				      const struct ncclUniqueId *idp)
{
	NRT_STATUS rc;
	struct ncclUniqueId id = *idp;
	nccom_info(NCCOM_VERSION_BANNER);
	if (newcomm == NULL || dev == NULL)
		return NCCOM_INVALID_ARGUMENT; /* PtrCheck */
	if (rank < 0 || rank >= nranks || nranks > BOOTSTRAP_MAX_RANKS) {
		nccom_warn(NRTABI_MSG_NCCOM_INVALID_RANK, rank, nranks);
		return NCCOM_INVALID_ARGUMENT;
	}
	struct ncclComm *c = NULL;
	if ((rc = comm_alloc(&c, nranks, rank, dev)) != NRT_SUCCESS)
		return rc;
	*newcomm = c;
	struct ncclPeerInfo *peers = NULL;
	struct nccom_global_maps maps = {0};
	struct nccom_live *l = malloc(sizeof *l);
	if (l == NULL)
		rc = NRT_FAIL_HOST_MEM_ALLOC;
	else
		rc = init_transports(c, &id, dev, global, &peers, &maps);
	if (rc == NRT_SUCCESS) {
		*l = (struct nccom_live){.comm = c, .peers = peers, .maps = maps};
		rc = nccom_comm_register(l);
	}
	if (rc != NRT_SUCCESS) {
		free(l);
		free(peers);
		free_global_maps(&maps);
		comm_free(c); /* bootstrapAbort: closes the sockets, NULL-safe */
		*newcomm = NULL;
		return rc;
	}
	nccom_info(NRTABI_MSG_NCCOM_INIT_COMPLETE, (void *)c, rank, nranks, c->cudaDev, (long)c->busId);
	return NRT_SUCCESS;
}

/* The split id of this process's one world of rank_n ranks (split.c,
 * docs/bootstrap.md#group-comm-split): 1 made, 0 no such world (the seed's
 * root id then), -1 failed. */
static int split_unique_id(char id[128], int rank_n)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static uint32_t serial;
	struct ncclComm *w = NULL;
	int found = nccom_comm_world(rank_n, NULL, NULL, &w, NULL);
	if (found == 2)
		nccom_info("neuronGetUniqueId: more than one world of %d ranks is live here, so the group's comm takes a root of its own", rank_n);
	if (found != 1)
		return found < 0 ? -1 : 0;
	if (pthread_mutex_lock(&mu) != 0)
		return -1;
	uint32_t k = ++serial;
	if (pthread_mutex_unlock(&mu) != 0)
		return -1;
	struct nccom_split_id sid = {.world_size = (uint32_t)rank_n, .cluster = w->cluster_id, .epoch = (int64_t)w->epoch,
				     .rank_n = (uint32_t)rank_n, .root = (uint32_t)w->rank, .serial = k};
	nccom_split_encode(&sid, id);
	return 1;
}

NRT_STATUS neuronGetUniqueId(char id[128], int rank_n, const char *hint)
{
	(void)hint;
	if (id == NULL || rank_n < 1 || rank_n > BOOTSTRAP_MAX_RANKS)
		return NCCOM_INVALID_ARGUMENT;
	bool split = false;
	NRT_STATUS rc0 = nccom_group_init_split(&split);
	if (rc0 != NRT_SUCCESS)
		return rc0;
	int made = split ? split_unique_id(id, rank_n) : 0;
	if (made < 0)
		return NRT_FAILURE;
	if (made == 1)
		return NRT_SUCCESS;
	struct ncclUniqueId u;
	bool env = false;
	NRT_STATUS rc = unique_id(NULL, rank_n, &u, &env);
	if (rc == NRT_SUCCESS)
		memcpy(id, u.internal, sizeof u.internal);
	return rc;
}

NRT_STATUS neuronInitGlobalComm(int g_dev_id, int g_dev_count, const enc_neuron_device_info_t *dev, const char *root_id,
				void **comm, const char *hint)
{
	(void)hint;
	if (dev == NULL || comm == NULL)
		return NCCOM_INVALID_ARGUMENT;
	if (g_dev_count < 1 || g_dev_count > BOOTSTRAP_MAX_RANKS || g_dev_id < 0 || g_dev_id >= g_dev_count) {
		nccom_warn(NRTABI_MSG_NCCOM_INVALID_RANK, g_dev_id, g_dev_count);
		return NCCOM_INVALID_ARGUMENT;
	}
	struct ncclUniqueId u;
	bool env = false;
	/* With a root comm id, rank 0 creates the root in comm_init_rank. */
	NRT_STATUS rc = root_id != NULL && root_id[0] ? unique_id(root_id, g_dev_count, &u, &env)
						       : unique_id(NULL, g_dev_count, &u, &env);
	if (rc != NRT_SUCCESS)
		return rc;
	return comm_init_rank(root_id, comm, g_dev_count, g_dev_id, dev, true, u);
}

/* neuronInitComm of a split id: the comm of the whole world in order, made
 * from this process's world comm with the id's cluster id and epoch (its
 * peer records copied, its bootstrap shared: nccom_comm_bootstrap), with no
 * connection. A field that is not this world's is refused by name. */
static NRT_STATUS split_init(void **comm, int rank_n, const struct nccom_split_id *sid, int rank, const enc_neuron_device_info_t *dev)
{
	uint64_t cluster = sid->cluster;
	time_t epoch = (time_t)sid->epoch;
	struct ncclComm *w = NULL;
	struct ncclPeerInfo *peers = NULL;
	int found = nccom_comm_world((int)sid->world_size, &cluster, &epoch, &w, &peers);
	if (found < 0)
		return NRT_FAIL_HOST_MEM_ALLOC;
	if (found != 1) {
		nccom_warn("neuronInitComm: unique id split(cluster=%#018llx,epoch=%lld,n=%u,root=%u,serial=%u): this process holds %s world of %u ranks with that cluster id and epoch: forged or from another world",
			   (unsigned long long)sid->cluster, (long long)sid->epoch, sid->world_size, sid->root, sid->serial, found == 0 ? "no" : "more than one", sid->world_size);
		return NCCOM_INVALID_ARGUMENT;
	}
	if ((uint32_t)rank_n != sid->rank_n || rank != w->rank) {
		nccom_warn("neuronInitComm: unique id split(cluster=%#018llx,serial=%u): asked for rank %d of %d, but this process is rank %d of the world of %u, which a split group lists in order",
			   (unsigned long long)sid->cluster, sid->serial, rank, rank_n, w->rank, sid->world_size);
		free(peers);
		return NCCOM_INVALID_ARGUMENT;
	}
	struct ncclComm *c = NULL;
	NRT_STATUS rc = comm_alloc(&c, rank_n, rank, dev);
	struct nccom_live *l = rc == NRT_SUCCESS ? malloc(sizeof *l) : NULL;
	if (rc == NRT_SUCCESS && l == NULL)
		rc = NRT_FAIL_HOST_MEM_ALLOC;
	if (rc == NRT_SUCCESS) {
		c->cluster_id = w->cluster_id;
		c->epoch = w->epoch;
		*l = (struct nccom_live){.comm = c, .peers = peers, .world = w};
		rc = nccom_comm_register(l);
	}
	if (rc != NRT_SUCCESS) {
		free(l);
		free(peers);
		comm_free(c);
		return rc;
	}
	*comm = c;
	nccom_info(NRTABI_MSG_NCCOM_INIT_COMPLETE, (void *)c, rank, rank_n, c->cudaDev, (long)c->busId);
	return NRT_SUCCESS;
}

NRT_STATUS neuronInitComm(void **comm, int rank_n, char *id, int rank, const enc_neuron_device_info_t *dev, bool bypass_graph)
{
	(void)bypass_graph; /* carried to the graph build, which is a separate call (docs/sources.md#s001 NOTE) */
	if (comm == NULL || id == NULL || dev == NULL)
		return NCCOM_INVALID_ARGUMENT;
	bool split = false;
	NRT_STATUS rc = nccom_group_init_split(&split);
	if (rc != NRT_SUCCESS)
		return rc;
	struct nccom_split_id sid;
	int d = nccom_split_decode(id, &sid);
	if (d < 0)
		return NCCOM_INVALID_ARGUMENT;
	if (d == 1 && !split) {
		nccom_warn("neuronInitComm: the unique id is a split of the world (docs/bootstrap.md#group-comm-split), but %s here says this rank's group comms bootstrap flat: every rank must set the same",
			   ENV_BOOTSTRAP_GROUP_INIT);
		return NCCOM_INVALID_ARGUMENT;
	}
	if (d == 1)
		return split_init(comm, rank_n, &sid, rank, dev);
	struct ncclUniqueId u;
	memcpy(u.internal, id, sizeof u.internal);
	return comm_init_rank(NULL, comm, rank_n, rank, dev, false, u);
}

NRT_STATUS neuronGetCommInfo(void *comm, nccl_comm_info_t *out)
{
	if (out == NULL || !nccom_comm_live(comm))
		return NRT_INVALID;
	const struct ncclComm *c = comm;
	memset(out, 0, sizeof *out);
	out->cluster_id = c->cluster_id;
	out->epoch = c->epoch;
	return NRT_SUCCESS;
}

NRT_STATUS neuronFreeComm(void *comm)
{
	struct nccom_live *l = nccom_comm_unregister(comm);
	if (l == NULL)
		return NRT_INVALID;
	/* What the net layer holds for it (docs/net-seam.md#connectors): the
	 * proxies first, since their transfers run on the connectors' plugin
	 * comms, then the connectors, registrations released before their comms. */
	nccom_proxy_comm_free(l->comm);
	nccom_connector_comm_free(l->comm);
	comm_free(l->comm);
	free(l->peers);
	free_global_maps(&l->maps);
	free(l);
	return NRT_SUCCESS;
}

/* The bootstrap state libnrt passes is the comm (docs/sources.md#s004-5: bcomm =
 * ...->nccl_comm); a comm without a bootstrap (single vNC) has no peer. */
static struct nccom_bootstrap *bootstrap_of(void *state, int peer, size_t size, bool p2p)
{
	struct nccom_bootstrap *b = nccom_comm_bootstrap(state);
	if (b == NULL || size > (size_t)INT32_MAX)
		return NULL;
	if (p2p && (peer < 0 || peer >= b->st.nranks || peer == b->st.rank))
		return NULL;
	return b;
}

NRT_STATUS neuronBootstrapSend(void *state, int peer, void *data, size_t size, const char *hint)
{
	(void)hint;
	struct nccom_bootstrap *b = bootstrap_of(state, peer, size, true);
	if (b == NULL || (data == NULL && size > 0))
		return NRT_INVALID;
	return nccom_bootstrap_send(b, peer, data, (int)size);
}

NRT_STATUS neuronBootstrapRecv(void *state, int peer, void *data, size_t size, const char *hint)
{
	(void)hint;
	struct nccom_bootstrap *b = bootstrap_of(state, peer, size, true);
	if (b == NULL || (data == NULL && size > 0))
		return NRT_INVALID;
	return nccom_bootstrap_recv(b, peer, data, (int)size);
}

NRT_STATUS neuronBootstrapAllGather(void *state, void *all_data, size_t size, const char *hint)
{
	(void)hint;
	struct nccom_bootstrap *b = bootstrap_of(state, 0, size, false);
	if (b == NULL || all_data == NULL || size == 0 || size > (size_t)INT32_MAX / (size_t)b->st.nranks)
		return NRT_INVALID;
	return nccom_bootstrap_allgather(b, all_data, (int)size, NCCOM_PHASE_EXPORT);
}

NRT_STATUS neuronBuildGraphComm(void *comm)
{
	if (!nccom_comm_live(comm))
		return NRT_INVALID;
	nccom_warn("neuronBuildGraphComm: the topology and graph build are not provided by the reference libnccom (docs/net-seam.md#graph-build)");
	return NRT_FAILURE;
}

/* The routing id of the peer's MLA, from its all-gathered peer record,
 * asked of libnrt (nec_mla_idx_to_rid, reverse leg). */
NRT_STATUS neuronGetPeerDeviceId(void *comm, int peer, int *out)
{
	int mla = -1, dev = 0;
	if (out == NULL || !nccom_comm_peer_mla(comm, peer, &mla, &dev))
		return NRT_INVALID;
	int rid = nec_mla_idx_to_rid(dev, mla);
	if (rid < 0)
		return NRT_INVALID;
	*out = rid;
	return NRT_SUCCESS;
}
