package inproc

import (
	"fmt"
	"sync"
	"unsafe"
)

// Bootstrap is libnccom's bootstrap surface (ncclBootstrapSend / Recv /
// AllGather, the shape of nccl.Bootstrap) implemented over a World: what the
// libnccom-trampoline transport calls when the library is this process. A
// bootstrap state is an opaque pointer from State.
type Bootstrap struct {
	w      *World
	states []bootState
	index  map[unsafe.Pointer]int // state -> rank; anything else is refused
	mu     sync.Mutex
	hints  map[string]int
}

type bootState struct{ rank int }

// NewBootstrap serves the bootstrap calls of every rank of w.
func NewBootstrap(w *World) *Bootstrap {
	b := &Bootstrap{w: w, states: make([]bootState, w.n), index: map[unsafe.Pointer]int{}, hints: map[string]int{}}
	for r := range b.states {
		b.states[r] = bootState{rank: r}
		b.index[unsafe.Pointer(&b.states[r])] = r
	}
	return b
}

// State is rank r's bootstrap state (the void *state of the C calls).
func (b *Bootstrap) State(r int) unsafe.Pointer { return unsafe.Pointer(&b.states[r]) }

// Hints counts the hint strings the calls carried.
func (b *Bootstrap) Hints() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.hints))
	for k, v := range b.hints {
		out[k] = v
	}
	return out
}

func (b *Bootstrap) endpoint(state unsafe.Pointer, hint string) (*Endpoint, error) {
	r, ok := b.index[state]
	if !ok {
		return nil, fmt.Errorf("inproc bootstrap: %p is not a bootstrap state of this world", state)
	}
	b.mu.Lock()
	b.hints[hint]++
	b.mu.Unlock()
	return b.w.endpts[r], nil
}

// BootstrapSend sends data to peer.
func (b *Bootstrap) BootstrapSend(state unsafe.Pointer, peer int, data []byte, hint string) error {
	e, err := b.endpoint(state, hint)
	if err != nil {
		return err
	}
	return e.Send(peer, data)
}

// BootstrapRecv receives exactly len(data) bytes from peer.
func (b *Bootstrap) BootstrapRecv(state unsafe.Pointer, peer int, data []byte, hint string) error {
	e, err := b.endpoint(state, hint)
	if err != nil {
		return err
	}
	return e.Recv(peer, data)
}

// BootstrapAllGather fills every size-byte block of allData.
func (b *Bootstrap) BootstrapAllGather(state unsafe.Pointer, allData []byte, size int, hint string) error {
	e, err := b.endpoint(state, hint)
	if err != nil {
		return err
	}
	if size*b.w.n != len(allData) {
		return fmt.Errorf("inproc bootstrap rank %d: all-gather of %d bytes is not %d blocks of %d", e.rank, len(allData), b.w.n, size)
	}
	return e.AllGather(allData)
}
