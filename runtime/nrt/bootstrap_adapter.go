package nrt

import "unsafe"

// Bootstrap offers the three bootstrap trampolines with the bootstrap state
// as an untyped pointer, the method set runtime/transport/nccl's Bootstrap
// interface asks for, so the per-NC bootstrap can run over the loaded
// libnccom: nccl.New(nrt.Bootstrap{}, state, rank, size, hint).
type Bootstrap struct{}

// BootstrapSend is the package's BootstrapSend.
func (Bootstrap) BootstrapSend(state unsafe.Pointer, peer int, data []byte, hint string) error {
	return BootstrapSend(BootstrapState(state), peer, data, hint)
}

// BootstrapRecv is the package's BootstrapRecv.
func (Bootstrap) BootstrapRecv(state unsafe.Pointer, peer int, data []byte, hint string) error {
	return BootstrapRecv(BootstrapState(state), peer, data, hint)
}

// BootstrapAllGather is the package's BootstrapAllGather; size is one
// rank's block.
func (Bootstrap) BootstrapAllGather(state unsafe.Pointer, allData []byte, size int, hint string) error {
	return BootstrapAllGather(BootstrapState(state), allData, size, hint)
}
