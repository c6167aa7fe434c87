/*
 * A libnrt.so.1 double for the net-plugin tests: the 20 reverse callbacks
 * @@NRT_2.0.0 (generated libnrt.map), the comm-init ones answering as a
 * multi-rank host's do, and nrt_get_libnccl_net soft-loading the plugin
 * NRTABI_NET_PLUGIN names (libnccom-net.so without it), once, as ncclInit's
 * soft load does (docs/sources.md#s000-2). The real libnrt is runtime/libnrt.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nrtabi.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *net;
static char net_err[256];

static void load(void)
{
	const char *p = getenv("NRTABI_NET_PLUGIN");
	net = dlopen(p && p[0] ? p : NCCOM_NET_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (net == NULL) {
		const char *e = dlerror();
		strncpy(net_err, e ? e : "dlopen failed", sizeof net_err - 1);
	}
}

void *nrt_get_libnccl_net(int *err, char *errmsg, size_t n)
{
	if (pthread_once(&once, load) != 0)
		return NULL;
	if (err)
		*err = net == NULL;
	if (errmsg && n > 0) {
		strncpy(errmsg, net ? "" : net_err, n - 1);
		errmsg[n - 1] = 0;
	}
	return net;
}

void nec_inc_semaphore(volatile uint32_t *sem, uint32_t val) { __atomic_fetch_add(sem, val, __ATOMIC_SEQ_CST); }
int nec_get_device_count(int *available_devices, uint32_t array_size)
{
	if (available_devices && array_size > 0)
		available_devices[0] = 0;
	return 1;
}
int nec_get_device_pci_bdf(int dev, uint32_t *domain, uint32_t *bus, uint8_t *slot, uint8_t *func)
{
	(void)dev, (void)domain, (void)bus, (void)slot, (void)func;
	return -1;
}
NRT_STATUS nec_get_virtual_core_size(uint32_t *out)
{
	if (out)
		*out = 1;
	return NRT_SUCCESS;
}
NRT_STATUS nec_build_port_and_rid_map(int local_dev, int *mla_indexes, int *host_device_ids, int count)
{
	(void)local_dev, (void)mla_indexes, (void)host_device_ids, (void)count;
	return NRT_SUCCESS;
}
bool nec_is_mla_available(int local_dev, int mla_idx) { return local_dev >= 0 && mla_idx >= 0; }
int nec_mla_idx_to_rid(int local_dev, int mla_idx) { return local_dev < 0 ? -1 : mla_idx; }
int nec_rid_to_mla_idx(int local_dev, int rid) { return local_dev < 0 ? -1 : rid; }
int nec_get_peer_mla_idx(int local_dev, int mla_idx, int port) { return local_dev < 0 || port < 0 ? -1 : mla_idx; }
int nec_get_p2p_pod_peer_node(uint32_t dev, int node, uint32_t port_distance, int *peer_node)
{
	(void)dev, (void)port_distance;
	if (peer_node)
		*peer_node = node;
	return 0;
}
NRT_STATUS nec_pod_node_can_access_peer_node(nec_pod_type_t pod_type, uint32_t local_rid, uint32_t local_node, uint32_t remote_rid,
					     uint32_t remote_node, int *can_access)
{
	(void)pod_type, (void)local_rid, (void)local_node, (void)remote_rid, (void)remote_node;
	if (can_access)
		*can_access = 0;
	return NRT_SUCCESS;
}
void nec_ndl_printk(char *str, uint32_t size, uint32_t action) { (void)str, (void)size, (void)action; }
size_t nec_get_dynamic_send_size_bytes(enc_host_mem_t *mem, size_t data_type_sz, int dst_rank, int rank_n)
{
	(void)mem, (void)data_type_sz, (void)dst_rank, (void)rank_n;
	return 0;
}
size_t nec_get_dynamic_send_offset_bytes(enc_host_mem_t *mem, size_t data_type_sz, int dst_rank, int rank_n)
{
	(void)mem, (void)data_type_sz, (void)dst_rank, (void)rank_n;
	return 0;
}
size_t nec_get_dynamic_recv_offset_bytes(enc_host_mem_t *mem, size_t data_type_sz, int src_rank, int rank_n)
{
	(void)mem, (void)data_type_sz, (void)src_rank, (void)rank_n;
	return 0;
}
void nec_set_recv_size_bytes(enc_host_mem_t *mem, size_t recv_size, size_t data_type_sz, int src_rank, int rank_n)
{
	(void)mem, (void)recv_size, (void)data_type_sz, (void)src_rank, (void)rank_n;
}
NRT_STATUS nrt_get_total_vnc_count(uint32_t *out)
{
	if (out)
		*out = 0; /* the seed's gate: 0 is the regime that bootstraps (docs/sources.md#s001-3) */
	return NRT_SUCCESS;
}
NRT_STATUS nrt_get_instance_info(nrt_instance_info_t *out, size_t n)
{
	if (out == NULL)
		return NRT_INVALID;
	memset(out, 0, n < sizeof *out ? n : sizeof *out);
	return NRT_SUCCESS;
}
NRT_STATUS nrt_get_version(nrt_version_t *out, size_t n)
{
	if (out == NULL)
		return NRT_INVALID;
	nrt_version_t v;
	memset(&v, 0, sizeof v);
	v.rt_major = 2, v.rt_minor = 31, v.rt_patch = 24;
	memcpy(v.git_hash, "0b044f4ce917b633a70eb3d0bc460f34ac3da620", 40);
	memcpy(out, &v, n < sizeof v ? n : sizeof v);
	return NRT_SUCCESS;
}
