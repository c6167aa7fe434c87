// Package device is the runtime's device layer: what libnrt knows about the
// NeuronCores, their PCI functions, MLA/routing-id topology and pod. The
// reverse callbacks (nec_*, nrt_*) and the global communicator read it
// through these interfaces; the default implementation is a simulated
// topology loaded from a TOML file.
//
// The topology file it reads:
// docs/runtime-boundary.md#simulated-topology-file.
package device

// Identity is what the global communicator reads about one virtual core
// (enc_init_global_comm's inputs, docs/sources.md#s004-6).
type Identity struct {
	NecDev        int    // the NeuronCore device (0..NEC_MAX_DEVICES-1)
	MLAIdx        int    // vcore->tpbs[0].device_id
	HostDeviceID  int    // db_get_host_device_id_from_mla(mla)
	RoutingID     int    // mla_routing_table[mla]
	VtpbIdx       uint32 // 0xffffffff when the core has no vtpb
	PodType       uint32 // nec_pod_type_t
	PodNodeID     uint32
	PodSize       uint32
	ReservationID uint64
}

// IdentitySource answers identity questions for the global communicator.
type IdentitySource interface {
	// CoreIdentity describes virtual core vnc, or fails naming the core
	// ("Failed to find core %u").
	CoreIdentity(vnc uint32) (Identity, error)
	// VirtualServerSize is the configured virtual-server partition size; 0 disables it.
	VirtualServerSize() uint32
}
