/*
 * The reverse leg: libnccom imports all 20 callbacks @NRT_2.0.0 (seed 001 §4),
 * whether or not this reference calls each one, so its link carries the
 * whole surface the shipped library binds (nrtabi check, role libnccom).
 */
#include "nccom.h"

__attribute__((used)) static void (*const nccom_ref_imports[])(void) = {
	(void (*)(void))nec_inc_semaphore,
	(void (*)(void))nec_get_device_count,
	(void (*)(void))nec_get_device_pci_bdf,
	(void (*)(void))nec_get_virtual_core_size,
	(void (*)(void))nec_build_port_and_rid_map,
	(void (*)(void))nec_is_mla_available,
	(void (*)(void))nec_mla_idx_to_rid,
	(void (*)(void))nec_rid_to_mla_idx,
	(void (*)(void))nec_get_peer_mla_idx,
	(void (*)(void))nec_get_p2p_pod_peer_node,
	(void (*)(void))nec_pod_node_can_access_peer_node,
	(void (*)(void))nec_ndl_printk,
	(void (*)(void))nec_get_dynamic_send_size_bytes,
	(void (*)(void))nec_get_dynamic_send_offset_bytes,
	(void (*)(void))nec_get_dynamic_recv_offset_bytes,
	(void (*)(void))nec_set_recv_size_bytes,
	(void (*)(void))nrt_get_total_vnc_count,
	(void (*)(void))nrt_get_instance_info,
	(void (*)(void))nrt_get_version,
	(void (*)(void))nrt_get_libnccl_net,
};
