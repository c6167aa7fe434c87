// Package inproc holds the in-process bootstrap world: a Transport whose ranks
// are goroutines of one process (tests, demo, benchmarks), with every message
// counted, and an in-process stand-in for libnccom's unique-id generation and
// comm init.
//
// See docs/bootstrap.md#the-per-nc-bootstrap.
package inproc

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nrtabi/nrtabi/runtime/transport"
)

// DefaultTimeout bounds every Recv unless Options says otherwise, the way
// NEURON_CCOM_SOCK_TIMEOUT bounds libnccom's bootstrap sockets: a rank whose
// peer never sends fails instead of hanging.
const DefaultTimeout = 30 * time.Second

// Options shape a World.
type Options struct {
	// Timeout bounds each Recv; 0 means DefaultTimeout, negative means none.
	Timeout time.Duration
	// Latency delays every message's delivery by this much (a modelled link:
	// the receiver waits until the message "arrives"). 0 delivers at once.
	Latency time.Duration
	// Trace keeps every message's (src, dst, size) for Trace().
	Trace bool
}

// World is N in-process ranks that can message each other.
type World struct {
	n      int
	opt    Options
	boxes  []*mailbox
	closed []atomic.Bool
	msgs   atomic.Int64
	bytes  atomic.Int64
	mu     sync.Mutex
	bySize map[int]int
	trace  []Message
	endpts []*Endpoint
}

// Message is one delivered message of a traced world.
type Message struct {
	Src, Dst, Size int
}

type envelope struct {
	data []byte
	at   time.Time // when it has "arrived" (Latency)
}

// mailbox holds one destination's queues, one FIFO per source.
type mailbox struct {
	mu   sync.Mutex
	q    map[int][]envelope
	wake chan struct{} // closed and replaced on every change
}

// NewWorld makes a world of n ranks.
func NewWorld(n int, opt Options) (*World, error) {
	if n < 1 {
		return nil, fmt.Errorf("inproc: world size %d: need at least one rank", n)
	}
	if opt.Timeout == 0 {
		opt.Timeout = DefaultTimeout
	}
	w := &World{n: n, opt: opt, boxes: make([]*mailbox, n), closed: make([]atomic.Bool, n), bySize: map[int]int{}, endpts: make([]*Endpoint, n)}
	for i := range w.boxes {
		w.boxes[i] = &mailbox{q: map[int][]envelope{}, wake: make(chan struct{})}
		w.endpts[i] = &Endpoint{w: w, rank: i}
	}
	return w, nil
}

// Size is the number of ranks.
func (w *World) Size() int { return w.n }

// Endpoint is rank r's Transport.
func (w *World) Endpoint(r int) *Endpoint { return w.endpts[r] }

// Stats is what crossed the world so far.
type Stats struct {
	Messages int64
	Bytes    int64
	BySize   map[int]int // message size -> count
}

// Stats reports the counters.
func (w *World) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	by := make(map[int]int, len(w.bySize))
	for k, v := range w.bySize {
		by[k] = v
	}
	return Stats{Messages: w.msgs.Load(), Bytes: w.bytes.Load(), BySize: by}
}

// Trace returns the messages sent so far (only when Options.Trace).
func (w *World) Trace() []Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Message(nil), w.trace...)
}

// ResetStats zeroes the counters and the trace.
func (w *World) ResetStats() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs.Store(0)
	w.bytes.Store(0)
	w.bySize = map[int]int{}
	w.trace = nil
}

// Close closes every endpoint.
func (w *World) Close() {
	for _, e := range w.endpts {
		_ = e.Close()
	}
}

// Endpoint is one rank's view of the world; it implements transport.Transport.
type Endpoint struct {
	w    *World
	rank int
}

var _ transport.Transport = (*Endpoint)(nil)

// ErrClosed is returned by operations on a closed endpoint.
var ErrClosed = errors.New("endpoint closed")

// Rank is this endpoint's rank.
func (e *Endpoint) Rank() int { return e.rank }

// Size is the world size.
func (e *Endpoint) Size() int { return e.w.n }

func (e *Endpoint) checkPeer(peer int) error {
	if e.w.closed[e.rank].Load() {
		return fmt.Errorf("inproc rank %d: %w", e.rank, ErrClosed)
	}
	if peer < 0 || peer >= e.w.n || peer == e.rank {
		return fmt.Errorf("inproc rank %d: peer %d is not another rank of this world of %d", e.rank, peer, e.w.n)
	}
	return nil
}

// Send queues a copy of data for peer; it never blocks.
func (e *Endpoint) Send(peer int, data []byte) error {
	if err := e.checkPeer(peer); err != nil {
		return err
	}
	if e.w.closed[peer].Load() {
		return fmt.Errorf("inproc rank %d: send to peer %d: peer %w", e.rank, peer, ErrClosed)
	}
	env := envelope{data: append([]byte(nil), data...)}
	if e.w.opt.Latency > 0 {
		env.at = time.Now().Add(e.w.opt.Latency)
	}
	e.w.count(e.rank, peer, len(data))
	mb := e.w.boxes[peer]
	mb.mu.Lock()
	mb.q[e.rank] = append(mb.q[e.rank], env)
	close(mb.wake)
	mb.wake = make(chan struct{})
	mb.mu.Unlock()
	return nil
}

func (w *World) count(src, dst, size int) {
	w.msgs.Add(1)
	w.bytes.Add(int64(size))
	w.mu.Lock()
	w.bySize[size]++
	if w.opt.Trace {
		w.trace = append(w.trace, Message{Src: src, Dst: dst, Size: size})
	}
	w.mu.Unlock()
}

// Recv takes the next message from peer into data; it must be len(data) bytes.
func (e *Endpoint) Recv(peer int, data []byte) error {
	if err := e.checkPeer(peer); err != nil {
		return err
	}
	var timeout <-chan time.Time
	if e.w.opt.Timeout > 0 {
		t := time.NewTimer(e.w.opt.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	mb := e.w.boxes[e.rank]
	for {
		mb.mu.Lock()
		if q := mb.q[peer]; len(q) > 0 {
			env := q[0]
			q[0] = envelope{}
			if len(q) == 1 {
				delete(mb.q, peer)
			} else {
				mb.q[peer] = q[1:]
			}
			mb.mu.Unlock()
			if d := time.Until(env.at); d > 0 {
				time.Sleep(d)
			}
			if len(env.data) != len(data) {
				return fmt.Errorf("inproc rank %d: message from peer %d is %d bytes, expected %d", e.rank, peer, len(env.data), len(data))
			}
			copy(data, env.data)
			return nil
		}
		wake := mb.wake
		mb.mu.Unlock()
		if e.w.closed[peer].Load() {
			return fmt.Errorf("inproc rank %d: recv from peer %d: peer %w", e.rank, peer, ErrClosed)
		}
		if e.w.closed[e.rank].Load() {
			return fmt.Errorf("inproc rank %d: %w", e.rank, ErrClosed)
		}
		select {
		case <-wake:
		case <-timeout:
			return fmt.Errorf("inproc rank %d: recv from peer %d: no %d-byte message within %s", e.rank, peer, len(data), e.w.opt.Timeout)
		}
	}
}

// AllGather runs a ring: in step s every rank passes block (rank-s) to its
// right neighbour, so n-1 steps fill every block with n(n-1) messages.
func (e *Endpoint) AllGather(data []byte) error {
	n := e.w.n
	if len(data)%n != 0 {
		return fmt.Errorf("inproc rank %d: all-gather of %d bytes does not split into %d blocks", e.rank, len(data), n)
	}
	if n == 1 {
		return nil
	}
	bs := len(data) / n
	right, left := (e.rank+1)%n, (e.rank+n-1)%n
	for s := 0; s < n-1; s++ {
		out := (e.rank - s + n) % n
		in := (e.rank - s - 1 + n) % n
		if err := e.Send(right, data[out*bs:(out+1)*bs]); err != nil {
			return err
		}
		if err := e.Recv(left, data[in*bs:(in+1)*bs]); err != nil {
			return err
		}
	}
	return nil
}

// Close marks the endpoint closed: its own calls fail and peers waiting on it
// fail once its queued messages are drained.
func (e *Endpoint) Close() error {
	if e.w.closed[e.rank].Swap(true) {
		return nil
	}
	for _, mb := range e.w.boxes {
		mb.mu.Lock()
		close(mb.wake)
		mb.wake = make(chan struct{})
		mb.mu.Unlock()
	}
	return nil
}
