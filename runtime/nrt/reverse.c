/*
 * The 20 reverse callbacks libnccom imports @NRT_2.0.0 (docs/sources.md#s000-4). Their
 * prototypes come from the generated header, so a signature that drifts from
 * the spec does not compile. Most are thin shims into the Go device layer;
 * nec_inc_semaphore is a plain store, nec_get_peer_mla_idx re-enters the
 * public nrt_get_instance_info, and the four dynamic-size shims adapt their
 * arguments to the runtime's own signatures. None calls into libnccom.
 */
#include <stddef.h>
#include <string.h>

#include "nrtabi.h"
#include "handoff.h"
#include "_cgo_export.h"

/* A release may lack members the runtime knows (docs/generator.md#absent-fields):
 * its header defines NRTABI_HAS_<STRUCT>_<FIELD> 0 for each it lacks, and 1
 * for each it has that another release of the tree lacks. A header generated
 * for one release alone names only its own absent fields: any other is a
 * member, so 1. */
#ifndef NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME
#define NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME 1
#endif
#ifndef NRTABI_HAS_NRT_INSTANCE_INFO_T_DEVICE_REVISION
#define NRTABI_HAS_NRT_INSTANCE_INFO_T_DEVICE_REVISION 1
#endif

/* Copy field f of *src into *dst only when the caller's size n covers all of
 * it: the size-tolerant copy of the nrt_* queries. */
#define COPY_IF_COVERED(dst, src, n, f)                                              \
	do {                                                                         \
		if (offsetof(__typeof__(*(dst)), f) + sizeof((dst)->f) <= (n))       \
			memcpy(&(dst)->f, &(src)->f, sizeof((dst)->f));              \
	} while (0)

/* The proxy-completion edge: mov %esi,(%rdi); ret. */
void nec_inc_semaphore(volatile uint32_t *sem, uint32_t val)
{
	*sem = val;
}

int nec_get_device_count(int *available_devices, uint32_t array_size)
{
	return nrtDeviceCount(available_devices, array_size);
}

int nec_get_device_pci_bdf(int dev, uint32_t *domain, uint32_t *bus, uint8_t *slot, uint8_t *func)
{
	return nrtDevicePCIBDF(dev, domain, bus, slot, func);
}

NRT_STATUS nec_get_virtual_core_size(uint32_t *out)
{
	return (NRT_STATUS)nrtVirtualCoreSize(out);
}

NRT_STATUS nec_build_port_and_rid_map(int local_dev, int *mla_indexes, int *host_device_ids, int count)
{
	return (NRT_STATUS)nrtBuildPortAndRIDMap(local_dev, mla_indexes, host_device_ids, count);
}

bool nec_is_mla_available(int local_dev, int mla_idx)
{
	return nrtIsMLAAvailable(local_dev, mla_idx);
}

int nec_mla_idx_to_rid(int local_dev, int mla_idx)
{
	return nrtMLAToRID(local_dev, mla_idx);
}

int nec_rid_to_mla_idx(int local_dev, int rid)
{
	return nrtRIDToMLA(local_dev, rid);
}

/* Re-entrant, and bounded: it asks the runtime's public query (which reads
 * the device layer and calls nothing else), remaps the port on the trn2/trn3
 * families, then asks the device layer. It never reaches a neuron* symbol. */
int nec_get_peer_mla_idx(int local_dev, int mla_idx, int port)
{
	nrt_instance_info_t info;
	if (nrt_get_instance_info(&info, sizeof info) != NRT_SUCCESS)
		return -1;
	if (nrtFamilyRemapsPorts(info.family)) {
		port = nrtArchGetPort(mla_idx, port);
		if (port < 0)
			return -1;
	}
	return nrtArchGetPeerMLAIdx(local_dev, mla_idx, port);
}

int nec_get_p2p_pod_peer_node(uint32_t dev, int node, uint32_t port_distance, int *peer_node)
{
	return nrtP2PPodPeerNode(dev, node, port_distance, peer_node);
}

NRT_STATUS nec_pod_node_can_access_peer_node(nec_pod_type_t pod_type, uint32_t local_rid, uint32_t local_node,
					     uint32_t remote_rid, uint32_t remote_node, int *can_access)
{
	return (NRT_STATUS)nrtPodNodeCanAccess((uint32_t)pod_type, local_rid, local_node, remote_rid, remote_node, can_access);
}

void nec_ndl_printk(char *str, uint32_t size, uint32_t action)
{
	nrtPrintk(str, size, action);
}

/* The adapter of the four: the runtime's enc_get_send_count_size_bytes takes
 * (mem, dst_rank, data_type_sz). rank_n is dropped and (data_type_sz,
 * dst_rank) swapped; forwarding argument for argument would hand the size
 * computation a rank as the element size and the element size as a rank. */
size_t nec_get_dynamic_send_size_bytes(enc_host_mem_t *mem, size_t data_type_sz, int dst_rank, int rank_n)
{
	(void)rank_n;
	return nrtEncGetSendCountSizeBytes(mem, dst_rank, data_type_sz);
}

/* The other three forward their arguments unchanged. */
size_t nec_get_dynamic_send_offset_bytes(enc_host_mem_t *mem, size_t data_type_sz, int dst_rank, int rank_n)
{
	return nrtEncGetSendOffsetBytes(mem, data_type_sz, dst_rank, rank_n);
}

size_t nec_get_dynamic_recv_offset_bytes(enc_host_mem_t *mem, size_t data_type_sz, int src_rank, int rank_n)
{
	return nrtEncGetRecvPostOffsetBytes(mem, data_type_sz, src_rank, rank_n);
}

void nec_set_recv_size_bytes(enc_host_mem_t *mem, size_t recv_size, size_t data_type_sz, int src_rank, int rank_n)
{
	nrtEncSetRecvSizeBytes(mem, recv_size, data_type_sz, src_rank, rank_n);
}

NRT_STATUS nrt_get_total_vnc_count(uint32_t *out)
{
	return (NRT_STATUS)nrtTotalVNCCount(out);
}

NRT_STATUS nrt_get_instance_info(nrt_instance_info_t *out, size_t n)
{
	if (out == NULL)
		return NRT_INVALID;
	nrt_instance_info_t full;
	memset(&full, 0, sizeof full);
	nrtInstanceInfo(&full);
	COPY_IF_COVERED(out, &full, n, family);
	COPY_IF_COVERED(out, &full, n, size);
#if NRTABI_HAS_NRT_INSTANCE_INFO_T_ARCH_NAME
	COPY_IF_COVERED(out, &full, n, arch_name);
#endif
#if NRTABI_HAS_NRT_INSTANCE_INFO_T_DEVICE_REVISION
	COPY_IF_COVERED(out, &full, n, device_revision);
#endif
	return NRT_SUCCESS;
}

NRT_STATUS nrt_get_version(nrt_version_t *out, size_t n)
{
	if (out == NULL)
		return NRT_INVALID;
	nrt_version_t full;
	memset(&full, 0, sizeof full);
	nrtRuntimeVersion(&full);
	COPY_IF_COVERED(out, &full, n, rt_major);
	COPY_IF_COVERED(out, &full, n, rt_minor);
	COPY_IF_COVERED(out, &full, n, rt_patch);
	COPY_IF_COVERED(out, &full, n, rt_maintenance);
	COPY_IF_COVERED(out, &full, n, rt_detail);
	COPY_IF_COVERED(out, &full, n, git_hash);
	return NRT_SUCCESS;
}

/* The handle ncclInit's soft dlopen of the net plugin kept; NULL with *err
 * set and the reason in errmsg when there is none. */
void *nrt_get_libnccl_net(int *err, char *errmsg, size_t n)
{
	void *h = nrt_nccl_net_handle;
	if (err != NULL)
		*err = h == NULL;
	if (errmsg != NULL && n > 0) {
		const char *why = h != NULL ? "" : nrt_nccl_net_error[0] ? nrt_nccl_net_error : "the net plugin was not loaded";
		size_t len = strlen(why);
		if (len >= n)
			len = n - 1;
		memcpy(errmsg, why, len);
		errmsg[len] = '\0';
	}
	return h;
}
