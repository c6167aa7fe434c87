package nrt

/*
#include <stdlib.h>
#include "nrt_slots.h"
*/
import "C"

import "unsafe"

// Handles of the net layer, all opaque libnccom pointers.
type (
	// NetComm is a listen, send or receive communicator of the net layer.
	NetComm unsafe.Pointer
	// MemHandle is a registered memory region.
	MemHandle unsafe.Pointer
	// Request is an outstanding send, receive or flush.
	Request unsafe.Pointer
	// NetConnector is a communicator's connector for one peer.
	NetConnector unsafe.Pointer
	// OFIHandle is libnccom's libfabric handle.
	OFIHandle unsafe.Pointer
)

// bdfLen is the buffer PreferredNcRidNicBdf offers: "dddd:bb:ss.f" and more.
const bdfLen = 64

// PreferredNcRidNic is the NIC preferred for NeuronCore nc and routing id rid.
func PreferredNcRidNic(nc, rid uint32) (int, error) {
	if err := mustInit("neuronPreferredNcRidNic"); err != nil {
		return 0, err
	}
	var out C.int
	rc := C.ncclPreferredNcRidNic(C.uint32_t(nc), C.uint32_t(rid), &out)
	return int(out), callErr("neuronPreferredNcRidNic", uint32(rc))
}

// PreferredNcRidNicBdf is that NIC's PCI address.
func PreferredNcRidNicBdf(nc, rid uint32) (string, error) {
	if err := mustInit("neuronPreferredNcRidNicBdf"); err != nil {
		return "", err
	}
	var buf [bdfLen]C.char
	rc := C.ncclPreferredNcRidNicBdf(C.uint32_t(nc), C.uint32_t(rid), &buf[0], C.size_t(len(buf)))
	buf[len(buf)-1] = 0
	return C.GoString(&buf[0]), callErr("neuronPreferredNcRidNicBdf", uint32(rc))
}

// NetRegMr registers size bytes at data (C or device memory) for pattern's
// traffic with peer.
func NetRegMr(comm Comm, pattern Pattern, peer int, isSend bool, commType OFICommType, data unsafe.Pointer, size int, ptrType int) (MemHandle, error) {
	if err := mustInit("neuronNetRegMr"); err != nil {
		return nil, err
	}
	var mh unsafe.Pointer
	rc := C.ncclNetRegMr(unsafe.Pointer(comm), C.enc_pattern_t(pattern), C.int(peer), C.bool(isSend), C.ofi_comm_type_t(commType),
		data, C.size_t(size), C.int(ptrType), &mh)
	return MemHandle(mh), callErr("neuronNetRegMr", uint32(rc))
}

// NetDeregMr releases a registration made by NetRegMr.
func NetDeregMr(comm Comm, pattern Pattern, peer int, isSend bool, commType OFICommType, mh MemHandle) error {
	if err := mustInit("neuronNetDeregMr"); err != nil {
		return err
	}
	rc := C.ncclNetDeregMr(unsafe.Pointer(comm), C.enc_pattern_t(pattern), C.int(peer), C.bool(isSend), C.ofi_comm_type_t(commType), unsafe.Pointer(mh))
	return callErr("neuronNetDeregMr", uint32(rc))
}

// GetPeerDeviceID is the device id of comm's rank peer.
func GetPeerDeviceID(comm Comm, peer int) (int, error) {
	if err := mustInit("neuronGetPeerDeviceId"); err != nil {
		return 0, err
	}
	var out C.int
	rc := C.ncclGetPeerDeviceId(unsafe.Pointer(comm), C.int(peer), &out)
	return int(out), callErr("neuronGetPeerDeviceId", uint32(rc))
}

// SetAffinity pins the calling thread for core, to override if it is not
// nil, and returns the affinity it replaced.
func SetAffinity(comm Comm, override *CPUSet, core int) (CPUSet, error) {
	var saved CPUSet
	if err := mustInit("neuronSetAffinity"); err != nil {
		return saved, err
	}
	rc := C.ncclSetAffinity(unsafe.Pointer(comm), (*C.cpu_set_t)(unsafe.Pointer(override)), (*C.cpu_set_t)(unsafe.Pointer(&saved)), C.int(core))
	return saved, callErr("neuronSetAffinity", uint32(rc))
}

// GetNetConnector is comm's connector for pattern's traffic with peer.
func GetNetConnector(comm Comm, pattern Pattern, peer int, isSend bool) (NetConnector, error) {
	if err := mustInit("neuronGetNetConnector"); err != nil {
		return nil, err
	}
	var c unsafe.Pointer
	rc := C.ncclGetNetConnector(unsafe.Pointer(comm), C.enc_pattern_t(pattern), C.int(peer), C.bool(isSend), &c)
	return NetConnector(c), callErr("neuronGetNetConnector", uint32(rc))
}

// InitNet initialises the net layer with the root communicator id.
func InitNet(rootCommID string) error {
	if err := mustInit("neuronInitNet"); err != nil {
		return err
	}
	r := cstring(rootCommID)
	defer free(r)
	return callErr("neuronInitNet", uint32(C.ncclInitNet(r)))
}

// FiniPlugin shuts the net plugin down.
func FiniPlugin() error {
	if err := mustInit("neuronFiniPlugin"); err != nil {
		return err
	}
	return callErr("neuronFiniPlugin", uint32(C.ncclFiniPlugin()))
}

// GetOFIHandle is libnccom's libfabric handle.
func GetOFIHandle() (OFIHandle, error) {
	if err := mustInit("neuronGetOFIHandle"); err != nil {
		return nil, err
	}
	var h unsafe.Pointer
	rc := C.ncclGetOFIHandle(&h)
	return OFIHandle(h), callErr("neuronGetOFIHandle", uint32(rc))
}

// NetListen listens on net device dev; handle receives the connection
// handle peers pass to NetConnect (its size is the net layer's).
func NetListen(dev int, handle []byte) (NetComm, error) {
	if err := mustInit("neuronNetListen"); err != nil {
		return nil, err
	}
	var l unsafe.Pointer
	rc := C.ncclNetListen(C.int(dev), bytesPtr(handle), &l)
	return NetComm(l), callErr("neuronNetListen", uint32(rc))
}

// NetConnect connects to the listener that produced handle.
func NetConnect(dev int, handle []byte) (NetComm, error) {
	if err := mustInit("neuronNetConnect"); err != nil {
		return nil, err
	}
	var s unsafe.Pointer
	rc := C.ncclNetConnect(C.int(dev), bytesPtr(handle), &s)
	return NetComm(s), callErr("neuronNetConnect", uint32(rc))
}

// NetAccept accepts one connection on listener.
func NetAccept(listener NetComm) (NetComm, error) {
	if err := mustInit("neuronNetAccept"); err != nil {
		return nil, err
	}
	var r unsafe.Pointer
	rc := C.ncclNetAccept(unsafe.Pointer(listener), &r)
	return NetComm(r), callErr("neuronNetAccept", uint32(rc))
}

// NetRegMrOG registers size bytes at data with a net communicator.
func NetRegMrOG(comm NetComm, data unsafe.Pointer, size int, typ int) (MemHandle, error) {
	if err := mustInit("neuronNetRegMrOG"); err != nil {
		return nil, err
	}
	var mh unsafe.Pointer
	rc := C.ncclNetRegMrOG(unsafe.Pointer(comm), data, C.size_t(size), C.int(typ), &mh)
	return MemHandle(mh), callErr("neuronNetRegMrOG", uint32(rc))
}

// NetDeregMrOG releases a registration made by NetRegMrOG.
func NetDeregMrOG(comm NetComm, mh MemHandle) error {
	if err := mustInit("neuronNetDeregMrOG"); err != nil {
		return err
	}
	return callErr("neuronNetDeregMrOG", uint32(C.ncclNetDeregMrOG(unsafe.Pointer(comm), unsafe.Pointer(mh))))
}

// NetGetMrKey is a registration's remote key.
func NetGetMrKey(mh MemHandle) (uint64, error) {
	if err := mustInit("neuronNetGetMrKey"); err != nil {
		return 0, err
	}
	var key C.uint64_t
	rc := C.ncclNetGetMrKey(unsafe.Pointer(mh), &key)
	return uint64(key), callErr("neuronNetGetMrKey", uint32(rc))
}

// NetIsend starts sending size bytes at data.
func NetIsend(comm NetComm, data unsafe.Pointer, size int, mh MemHandle) (Request, error) {
	if err := mustInit("neuronNetIsend"); err != nil {
		return nil, err
	}
	var r unsafe.Pointer
	rc := C.ncclNetIsend(unsafe.Pointer(comm), data, C.int(size), unsafe.Pointer(mh), &r)
	return Request(r), callErr("neuronNetIsend", uint32(rc))
}

// NetIrecv starts receiving up to size bytes into data.
func NetIrecv(comm NetComm, data unsafe.Pointer, size int, mh MemHandle) (Request, error) {
	if err := mustInit("neuronNetIrecv"); err != nil {
		return nil, err
	}
	var r unsafe.Pointer
	rc := C.ncclNetIrecv(unsafe.Pointer(comm), data, C.int(size), unsafe.Pointer(mh), &r)
	return Request(r), callErr("neuronNetIrecv", uint32(rc))
}

// NetIflush starts flushing received data to its destination.
func NetIflush(comm NetComm, data unsafe.Pointer, size int, mh MemHandle) (Request, error) {
	if err := mustInit("neuronNetIflush"); err != nil {
		return nil, err
	}
	var r unsafe.Pointer
	rc := C.ncclNetIflush(unsafe.Pointer(comm), data, C.int(size), unsafe.Pointer(mh), &r)
	return Request(r), callErr("neuronNetIflush", uint32(rc))
}

// NetTest polls req: whether it is done and how many bytes it moved.
func NetTest(req Request) (done bool, size int, err error) {
	if err := mustInit("neuronNetTest"); err != nil {
		return false, 0, err
	}
	var d, n C.int
	rc := C.ncclNetTest(unsafe.Pointer(req), &d, &n)
	return d != 0, int(n), callErr("neuronNetTest", uint32(rc))
}

// NetCloseSend closes a send communicator.
func NetCloseSend(comm NetComm) error {
	if err := mustInit("neuronNetCloseSend"); err != nil {
		return err
	}
	return callErr("neuronNetCloseSend", uint32(C.ncclNetCloseSend(unsafe.Pointer(comm))))
}

// NetCloseRecv closes a receive communicator.
func NetCloseRecv(comm NetComm) error {
	if err := mustInit("neuronNetCloseRecv"); err != nil {
		return err
	}
	return callErr("neuronNetCloseRecv", uint32(C.ncclNetCloseRecv(unsafe.Pointer(comm))))
}

// NetCloseListen closes a listener.
func NetCloseListen(comm NetComm) error {
	if err := mustInit("neuronNetCloseListen"); err != nil {
		return err
	}
	return callErr("neuronNetCloseListen", uint32(C.ncclNetCloseListen(unsafe.Pointer(comm))))
}
