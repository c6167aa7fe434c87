package nrt

// This file is where libnrt's typed API meets its boundary release: the
// generated release selector (generated/abi, chosen by -tags
// nrtabi_release_<release>, every release by its own tag; none is a compile error) and, in the
// generated zrelease_*.go files of this package, the C include path of the
// same release's header and slot table. The selector, not this file, is the
// one door to the release: runtime/collectives (which has zrelease_*.go files
// of its own), the transports, runtime/launch and runtime/worldprog import
// generated/abi directly, and the build tag makes them all see one release.

/*
#cgo CFLAGS: -D_GNU_SOURCE
*/
import "C"

import "github.com/nrtabi/nrtabi/generated/abi"

// Release is the boundary release this runtime is built for.
const Release = abi.Release

// Types of the boundary, as the typed API hands them out.
type (
	// VersionInfo is nec_version_info_t, what neuronGetVersionInfo reports.
	VersionInfo = abi.NECVersionInfo
	// DeviceInfo is enc_neuron_device_info_t.
	DeviceInfo = abi.EncNeuronDeviceInfo
	// CommInfo is nccl_comm_info_t, filled by neuronGetCommInfo.
	CommInfo = abi.NcclCommInfo
	// CPUSet has the size and alignment of cpu_set_t.
	CPUSet = abi.CPUSet
	// Connectivity is enc_net_connectivity_t.
	Connectivity = abi.EncNetConnectivity
	// Pattern is enc_pattern_t.
	Pattern = abi.EncPattern
	// OFICommType is ofi_comm_type_t.
	OFICommType = abi.OFICommType
	// InstanceInfo is nrt_instance_info_t.
	InstanceInfo = abi.NRTInstanceInfo
	// RuntimeVersion is nrt_version_t.
	RuntimeVersion = abi.NRTVersion
	// ForwardSymbol is one row of the forward table.
	ForwardSymbol = abi.ForwardSymbol
	// ReverseSymbol is one row of the reverse table.
	ReverseSymbol = abi.ReverseSymbol

	rawStatus  = abi.NRTStatus
	rawPodType = abi.NECPodType
)

// Forward and Reverse are the boundary's symbol tables (forward in dlsym order).
var (
	Forward = abi.Forward
	Reverse = abi.Reverse
)

// Spec constants and exact messages the hand-written runtime needs.
const (
	DefaultLibrary      = abi.NccomLibrary
	DefaultNetLibrary   = abi.NccomNetLibrary
	CompatID            = abi.NccomCompatID
	UniqueIDBytes       = abi.NcclUniqueIDBytes
	ConnectivityDefault = abi.EncConnectivityDefault

	guardProbe = abi.Probe
	guardHot   = abi.Hot

	msgRequestFailed = abi.MsgNcclRequestFailed
	msgInitError     = abi.MsgNcclInitError

	libnrtGit            = abi.LibnrtGit
	libnrtRuntimeVersion = abi.LibnrtRuntimeVersion

	statusSuccess       = abi.NRTSuccess
	statusFailure       = abi.NRTFailure
	statusInvalid       = abi.NRTInvalid
	statusUninitialized = abi.NRTUninitialized
)

// podTypes are the nec_pod_type_t values a topology file may name.
var podTypes = []rawPodType{abi.NECPodTypeNone, abi.NECPodTypeP2P, abi.NECPodTypeSwitch}

// Sizes and messages the device layer is checked against.
const (
	maxDevices = abi.NECMaxDevices
	msgNoCore  = abi.MsgGcommNoCore
)
