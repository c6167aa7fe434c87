package collectives

import (
	"fmt"
	"sync"
	"time"
)

// barrierHub holds the process's local barriers, one per comm (keyed by the
// comm's unique id), shared by the comm's local participants.
type barrierHub struct {
	mu sync.Mutex
	m  map[string]*localBarrier
}

// localBarrier is the bp_barrier of one comm in this process: it opens when
// every local participant has arrived.
type localBarrier struct {
	n, arrived, refs int
	open             chan struct{}
}

// arrive joins the barrier of key (creating it for n participants) and counts
// this participant in.
func (h *barrierHub) arrive(key string, n int) (*localBarrier, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.m[key]
	if b == nil {
		b = &localBarrier{n: n, open: make(chan struct{})}
		h.m[key] = b
	}
	if b.n != n {
		return nil, fmt.Errorf("local barrier has %d participants, this rank counts %d", b.n, n)
	}
	if b.arrived == b.n {
		return nil, fmt.Errorf("local barrier already has all %d participants", b.n)
	}
	b.refs++
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	return b, nil
}

// leave drops a participant's hold on the barrier.
func (h *barrierHub) leave(key string, b *localBarrier) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b.refs--
	if b.refs == 0 && h.m[key] == b {
		delete(h.m, key)
	}
}

// wait blocks until every local participant of b arrived, or the timeout.
func (h *barrierHub) wait(b *localBarrier, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-b.open:
		return nil
	case <-t.C:
		h.mu.Lock()
		defer h.mu.Unlock()
		return fmt.Errorf("%d of %d local participants arrived within %s", b.arrived, b.n, timeout)
	}
}
