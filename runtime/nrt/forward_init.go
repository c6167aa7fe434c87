package nrt

/*
#include <stdlib.h>
#include "nrt_slots.h"
*/
import "C"

import "unsafe"

// The typed API: one Go function per forward entry point, each calling the
// generated nccl* trampoline (guard included) through cgo. Failures are
// *CallError values carrying the NRT_STATUS.

// Comm is a libnccom communicator (the void *comm of the forward calls).
type Comm unsafe.Pointer

// UniqueID is the 128-byte ncclUniqueId.
type UniqueID [UniqueIDBytes]byte

func cstring(s string) *C.char { return C.CString(s) }

func free(p *C.char) { C.free(unsafe.Pointer(p)) }

// GetVersionInfo asks the loaded libnccom for its version (the unguarded
// pre-init probe ncclGetVersionInfo). It returns NRT_FAILURE when the probe
// slot is NULL, which is the case after any failed handoff.
func GetVersionInfo() (VersionInfo, error) {
	var v VersionInfo
	rc := C.ncclGetVersionInfo((*C.nec_version_info_t)(unsafe.Pointer(&v)), C.uint32_t(unsafe.Sizeof(v)))
	return v, callErr("neuronGetVersionInfo", uint32(rc))
}

// GetUniqueID creates the unique id of a new communicator of rankN ranks.
func GetUniqueID(rankN int, hint string) (UniqueID, error) {
	var id UniqueID
	if err := mustInit("neuronGetUniqueId"); err != nil {
		return id, err
	}
	h := cstring(hint)
	defer free(h)
	rc := C.ncclGetUniqueId((*C.char)(unsafe.Pointer(&id[0])), C.int(rankN), h)
	return id, callErr("neuronGetUniqueId", uint32(rc))
}

// InitGlobalComm creates the global communicator of gDevCount devices.
func InitGlobalComm(gDevID, gDevCount int, dev *DeviceInfo, rootID, hint string) (Comm, error) {
	if err := mustInit("neuronInitGlobalComm"); err != nil {
		return nil, err
	}
	r, h := cstring(rootID), cstring(hint)
	defer free(r)
	defer free(h)
	var c unsafe.Pointer
	rc := C.ncclInitGlobalComm(C.int(gDevID), C.int(gDevCount), (*C.enc_neuron_device_info_t)(unsafe.Pointer(dev)), r, &c, h)
	return Comm(c), callErr("neuronInitGlobalComm", uint32(rc))
}

// InitComm joins communicator id as rank of rankN.
func InitComm(rankN int, id *UniqueID, rank int, dev *DeviceInfo, bypassGraph bool) (Comm, error) {
	if err := mustInit("neuronInitComm"); err != nil {
		return nil, err
	}
	var c unsafe.Pointer
	rc := C.ncclInitComm(&c, C.int(rankN), (*C.char)(unsafe.Pointer(&id[0])), C.int(rank),
		(*C.enc_neuron_device_info_t)(unsafe.Pointer(dev)), C.bool(bypassGraph))
	return Comm(c), callErr("neuronInitComm", uint32(rc))
}

// BuildGraphComm builds comm's graph.
func BuildGraphComm(comm Comm) error {
	if err := mustInit("neuronBuildGraphComm"); err != nil {
		return err
	}
	return callErr("neuronBuildGraphComm", uint32(C.ncclBuildGraphComm(unsafe.Pointer(comm))))
}

// GetCommInfo describes comm.
func GetCommInfo(comm Comm) (CommInfo, error) {
	var info CommInfo
	if err := mustInit("neuronGetCommInfo"); err != nil {
		return info, err
	}
	rc := C.ncclGetCommInfo(unsafe.Pointer(comm), (*C.nccl_comm_info_t)(unsafe.Pointer(&info)))
	return info, callErr("neuronGetCommInfo", uint32(rc))
}

// FreeComm releases comm.
func FreeComm(comm Comm) error {
	if err := mustInit("neuronFreeComm"); err != nil {
		return err
	}
	return callErr("neuronFreeComm", uint32(C.ncclFreeComm(unsafe.Pointer(comm))))
}

// ExpandConnectivity widens comm's network connectivity.
func ExpandConnectivity(comm Comm, conn Connectivity) error {
	if err := mustInit("neuronExpandConnectivity"); err != nil {
		return err
	}
	return callErr("neuronExpandConnectivity", uint32(C.ncclExpandConnectivity(unsafe.Pointer(comm), C.enc_net_connectivity_t(conn))))
}
