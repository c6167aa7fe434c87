// Package nccl is the Transport over libnccom's bootstrap socket: the three
// trampolines ncclBootstrapSend / ncclBootstrapRecv / ncclBootstrapAllGather
// (forward rows 11..13), reached through the small Bootstrap interface so the
// per-NC bootstrap runs unchanged over the real library or an in-process one.
//
// See docs/bootstrap.md#the-per-nc-bootstrap.
package nccl

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/nrtabi/nrtabi/runtime/transport"
)

// Bootstrap is the C surface this transport calls, one method per trampoline:
// NRT_STATUS ncclBootstrapSend(void *state, int peer, void *data, size_t size, const char *hint)
// NRT_STATUS ncclBootstrapRecv(void *state, int peer, void *data, size_t size, const char *hint)
// NRT_STATUS ncclBootstrapAllGather(void *state, void *all_data, size_t size, const char *hint)
// data carries both the pointer and the size; for the all-gather, allData
// holds every rank's block and size is one block (the C size argument). A
// non-nil error is a non-zero status.
type Bootstrap interface {
	BootstrapSend(state unsafe.Pointer, peer int, data []byte, hint string) error
	BootstrapRecv(state unsafe.Pointer, peer int, data []byte, hint string) error
	BootstrapAllGather(state unsafe.Pointer, allData []byte, size int, hint string) error
}

// Transport adapts one rank's libnccom bootstrap state to transport.Transport.
// The state belongs to libnccom (it lives as long as the comm that owns it);
// Close only stops this adapter from using it.
type Transport struct {
	b          Bootstrap
	state      unsafe.Pointer
	rank, size int
	hint       string
	closed     atomic.Bool
}

var _ transport.Transport = (*Transport)(nil)

// New wraps state, the bootstrap state of rank of a world of size, as a
// Transport; hint is passed on every call (libnrt names its call site there).
func New(b Bootstrap, state unsafe.Pointer, rank, size int, hint string) (*Transport, error) {
	switch {
	case b == nil:
		return nil, fmt.Errorf("nccl transport: no bootstrap implementation (the ncclBootstrap* trampolines)")
	case state == nil:
		return nil, fmt.Errorf("nccl transport rank %d: NULL bootstrap state; pass the comm's bootstrap state", rank)
	case size < 1 || rank < 0 || rank >= size:
		return nil, fmt.Errorf("nccl transport: rank %d is not a rank of a world of %d", rank, size)
	}
	return &Transport{b: b, state: state, rank: rank, size: size, hint: hint}, nil
}

// Rank and Size describe this endpoint.
func (t *Transport) Rank() int { return t.rank }
func (t *Transport) Size() int { return t.size }

func (t *Transport) check(peer int) error {
	if t.closed.Load() {
		return fmt.Errorf("nccl transport rank %d: closed", t.rank)
	}
	if peer < 0 || peer >= t.size || peer == t.rank {
		return fmt.Errorf("nccl transport rank %d: peer %d is not another rank of this world of %d", t.rank, peer, t.size)
	}
	return nil
}

// Send is ncclBootstrapSend.
func (t *Transport) Send(peer int, data []byte) error {
	if err := t.check(peer); err != nil {
		return err
	}
	if err := t.b.BootstrapSend(t.state, peer, data, t.hint); err != nil {
		return fmt.Errorf("ncclBootstrapSend to peer %d (%d bytes, %s): %w", peer, len(data), t.hint, err)
	}
	return nil
}

// Recv is ncclBootstrapRecv.
func (t *Transport) Recv(peer int, data []byte) error {
	if err := t.check(peer); err != nil {
		return err
	}
	if err := t.b.BootstrapRecv(t.state, peer, data, t.hint); err != nil {
		return fmt.Errorf("ncclBootstrapRecv from peer %d (%d bytes, %s): %w", peer, len(data), t.hint, err)
	}
	return nil
}

// AllGather is ncclBootstrapAllGather; size is the per-rank block.
func (t *Transport) AllGather(data []byte) error {
	if t.closed.Load() {
		return fmt.Errorf("nccl transport rank %d: closed", t.rank)
	}
	if len(data)%t.size != 0 {
		return fmt.Errorf("nccl transport rank %d: all-gather of %d bytes does not split into %d blocks", t.rank, len(data), t.size)
	}
	if err := t.b.BootstrapAllGather(t.state, data, len(data)/t.size, t.hint); err != nil {
		return fmt.Errorf("ncclBootstrapAllGather (%d bytes per rank, %s): %w", len(data)/t.size, t.hint, err)
	}
	return nil
}

// Close stops the adapter; the bootstrap state stays libnccom's.
func (t *Transport) Close() error {
	t.closed.Store(true)
	return nil
}
