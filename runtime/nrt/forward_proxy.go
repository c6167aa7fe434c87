package nrt

/*
#include "nrt_slots.h"

// The hot tick returns its status and both flags in one word, so the Go
// caller passes no pointer across cgo and allocates nothing.
static inline uint64_t nrt_go_proxy_progress(void *comm, uint32_t stream_id, uint32_t proxy_id)
{
	bool progressed = false, failed = false;
	NRT_STATUS rc = ncclNetworkProxyProgress(comm, stream_id, proxy_id, &progressed, &failed);
	return (uint64_t)(uint32_t)rc | (uint64_t)progressed << 32 | (uint64_t)failed << 33;
}
*/
import "C"

import "unsafe"

// StartNetworkProxy starts the proxy of stream streamID. ops, src and dst
// point at C arrays of net_ops_info_t, net_src_addr_t and net_dest_addr_t,
// whose layouts the spec keeps opaque.
func StartNetworkProxy(comm Comm, streamID, proxyID uint32, ops unsafe.Pointer, nOps int, src unsafe.Pointer, nSrc int, dst unsafe.Pointer, nDst int) error {
	if err := mustInit("neuronStartNetworkProxy"); err != nil {
		return err
	}
	rc := C.ncclStartNetworkProxy(unsafe.Pointer(comm), C.uint32_t(streamID), C.uint32_t(proxyID),
		(*C.net_ops_info_t)(ops), C.int(nOps), (*C.net_src_addr_t)(src), C.int(nSrc), (*C.net_dest_addr_t)(dst), C.int(nDst))
	return callErr("neuronStartNetworkProxy", uint32(rc))
}

// StopNetworkProxy stops the proxy of stream streamID.
func StopNetworkProxy(comm Comm, streamID uint32) error {
	if err := mustInit("neuronStopNetworkProxy"); err != nil {
		return err
	}
	return callErr("neuronStopNetworkProxy", uint32(C.ncclStopNetworkProxy(unsafe.Pointer(comm), C.uint32_t(streamID))))
}

// NetworkProxyProgress is one proxy tick, the hot path. Its trampoline
// carries no sentinel guard (docs/sources.md#s000-3): it is only reachable once a
// handoff succeeded. The Go layer keeps that promise with one atomic load and
// returns NRT_UNINITIALIZED instead of entering a NULL slot. A call makes no
// allocation.
func NetworkProxyProgress(comm Comm, streamID, proxyID uint32) (progressed, failed bool, err error) {
	if !ready.Load() {
		return false, false, ErrUninitialized
	}
	r := uint64(C.nrt_go_proxy_progress(unsafe.Pointer(comm), C.uint32_t(streamID), C.uint32_t(proxyID)))
	if rc := uint32(r); rc != uint32(statusSuccess) {
		err = Status(rc)
	}
	return r>>32&1 != 0, r>>33&1 != 0, err
}
