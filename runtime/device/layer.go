package device

import "fmt"

// Layer is the device layer the reverse callbacks re-enter: libnrt's NDL and
// encd layers, which the shipped nec_* shims tail-call. It answers in Go
// terms; runtime/nrt adapts each answer to its callback's C signature.
//
// A Layer never calls into libnccom: runtime/nrt imports this package, not
// the other way round, so no method can reach a forward entry point and the
// seam cannot recurse.
type Layer interface {
	IdentitySource

	// Devices lists the available NeuronCore devices (nec_get_device_count).
	Devices() []int
	// PCIBDF is device dev's PCI address (nec_get_device_pci_bdf).
	PCIBDF(dev int) (BDF, error)
	// VirtualCoreSize is the number of physical cores in one virtual core
	// (nec_get_virtual_core_size).
	VirtualCoreSize() (uint32, error)
	// PortMap is, per port of local device dev, the MLA the port reaches and
	// that MLA's host device id (nec_build_port_and_rid_map).
	PortMap(dev int) ([]Port, error)
	// MLAAvailable reports whether MLA mla is usable from device dev
	// (nec_is_mla_available).
	MLAAvailable(dev, mla int) bool
	// MLAToRID and RIDToMLA translate between MLA indices and routing ids
	// (nec_mla_idx_to_rid, nec_rid_to_mla_idx).
	MLAToRID(dev, mla int) (int, error)
	RIDToMLA(dev, rid int) (int, error)
	// RemapsPorts reports whether instance family number family is one of
	// the trn2/trn3 families, whose ports nec_get_peer_mla_idx remaps.
	RemapsPorts(family uint32) bool
	// Port is the remapped port (encd_arch_get_port).
	Port(mla, port int) (int, error)
	// PeerMLA is the MLA reached from mla through port, -1 for none
	// (encd_arch_get_peer_mla_idx).
	PeerMLA(dev, mla, port int) (int, error)
	// P2PPodPeerNode is the pod node port distance away from node
	// (nec_get_p2p_pod_peer_node).
	P2PPodPeerNode(dev uint32, node int, distance uint32) (int, error)
	// PodNodeCanAccess reports whether a core on localNode can reach one on
	// remoteNode in a pod of type podType (nec_pod_node_can_access_peer_node).
	PodNodeCanAccess(podType, localRID, localNode, remoteRID, remoteNode uint32) (bool, error)
	// Printk writes a message to the driver log (nec_ndl_printk).
	Printk(msg string, action uint32)
	// Instance describes the instance (nrt_get_instance_info).
	Instance() Instance
	// TotalVNCCount is the number of virtual cores.
	TotalVNCCount() uint32
	// ReportedVNCCount is what nrt_get_total_vnc_count answers: 0 in the
	// distributed regime, where libnccom bootstraps.
	ReportedVNCCount() uint32
}

// BDF is a PCI address: domain:bus:slot.function.
type BDF struct {
	Domain uint32
	Bus    uint32
	Slot   uint8
	Func   uint8
}

func (b BDF) String() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", b.Domain, b.Bus, b.Slot, b.Func)
}

// Port is what one port of a device reaches.
type Port struct {
	MLA          int // -1: nothing is connected
	HostDeviceID int // -1 with MLA
}

// Instance is the instance description nrt_get_instance_info reports.
type Instance struct {
	Family   string // e.g. "trn2"
	FamilyID uint32 // nrt_instance_info_t.family
	Size     uint32 // nrt_instance_info_t.size
	// Arch and Revision are what nrt_instance_info_t.arch_name and
	// device_revision report, in a release whose struct has them: a release
	// may lack either (docs/generator.md#absent-fields), and then reports
	// none. Their Go names are not the generated fields' (ArchName,
	// DeviceRevision), which only presence accessors may name.
	Arch     string
	Revision string
}

// ABI is what the device layer needs from the boundary release it serves:
// the numeric nec_pod_type_t of each pod type name a topology may use, the
// exact message for an unknown core and the sizes a topology must fit. The
// package itself names no release, so one device layer serves every release;
// runtime/nrt supplies these. A zero limit is no limit.
type ABI struct {
	PodTypes          map[string]uint32 // "none", "p2p", "switch" -> nec_pod_type_t
	MsgNoCore         string            // "Failed to find core %u", a C format
	MaxArchName       int               // bytes of nrt_instance_info_t.arch_name, NUL included; 0 where the release lacks the field (nothing reported, nothing to fit)
	MaxDeviceRevision int               // bytes of nrt_instance_info_t.device_revision, NUL included; 0 where the release lacks the field
	MaxDevices        int               // NEC_MAX_DEVICES
}
