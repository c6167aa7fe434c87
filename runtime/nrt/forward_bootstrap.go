package nrt

/*
#include "nrt_slots.h"
*/
import "C"

import "unsafe"

// BootstrapState is a libnccom bootstrap handle (the void *state of the
// bootstrap calls), e.g. the one a communicator carries.
type BootstrapState unsafe.Pointer

func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// BootstrapSend sends data to peer over the bootstrap network.
func BootstrapSend(state BootstrapState, peer int, data []byte, hint string) error {
	if err := mustInit("neuronBootstrapSend"); err != nil {
		return err
	}
	h := cstring(hint)
	defer free(h)
	rc := C.ncclBootstrapSend(unsafe.Pointer(state), C.int(peer), bytesPtr(data), C.size_t(len(data)), h)
	return callErr("neuronBootstrapSend", uint32(rc))
}

// BootstrapRecv fills data with the next message from peer; the message
// must be exactly len(data) bytes.
func BootstrapRecv(state BootstrapState, peer int, data []byte, hint string) error {
	if err := mustInit("neuronBootstrapRecv"); err != nil {
		return err
	}
	h := cstring(hint)
	defer free(h)
	rc := C.ncclBootstrapRecv(unsafe.Pointer(state), C.int(peer), bytesPtr(data), C.size_t(len(data)), h)
	return callErr("neuronBootstrapRecv", uint32(rc))
}

// BootstrapAllGather exchanges one block of size bytes per rank: all holds
// every rank's block, this rank's filled in on entry. The size argument is
// the per-rank block size, as libnccom takes it, so len(all) must be a
// multiple of it.
func BootstrapAllGather(state BootstrapState, all []byte, size int, hint string) error {
	if err := mustInit("neuronBootstrapAllGather"); err != nil {
		return err
	}
	if size <= 0 || len(all)%size != 0 {
		return &CallError{Symbol: "neuronBootstrapAllGather", Status: ErrInvalid}
	}
	h := cstring(hint)
	defer free(h)
	rc := C.ncclBootstrapAllGather(unsafe.Pointer(state), bytesPtr(all), C.size_t(size), h)
	return callErr("neuronBootstrapAllGather", uint32(rc))
}
