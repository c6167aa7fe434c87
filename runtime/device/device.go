// Package device is the runtime's device layer: what libnrt knows about the
// NeuronCores, their PCI functions, MLA/routing-id topology and pod. The
// reverse callbacks (nec_*, nrt_*) and the global communicator read it
// through these interfaces; the default implementation is a simulated
// topology loaded from a TOML file.
//
// The topology file it reads:
// docs/runtime-boundary.md#simulated-topology-file.
package device

import "errors"

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

// The three steps of enc_init_global_comm's identity lookup
// (docs/sources.md#s004-6) fail with three different messages: the virtual
// core ("Failed to find core %u"), its MLA ("Failed to get MLA") and the
// device driver context ("TDRV not initialized!"). A CoreIdentity error that
// wraps ErrNoMLA or ErrNoTDRV (errors.Is) says the core itself was found, and
// the Identity returned with it has the core's NecDev; any other error means
// the core was not found.
var (
	ErrNoMLA  = errors.New("the core's MLA and TPB could not be read (db_physical_core_get_mla_and_tpb)")
	ErrNoTDRV = errors.New("the device driver context is not initialised (db_tdrv_ctx_get)")
)

// IdentitySource answers identity questions for the global communicator.
type IdentitySource interface {
	// CoreIdentity describes virtual core vnc, or fails naming the core
	// ("Failed to find core %u"); a failure past the core wraps ErrNoMLA
	// or ErrNoTDRV.
	CoreIdentity(vnc uint32) (Identity, error)
	// VirtualServerSize is the configured virtual-server partition size; 0 disables it.
	VirtualServerSize() uint32
}
