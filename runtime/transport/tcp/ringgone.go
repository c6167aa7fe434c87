package tcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// A ring neighbour's link ending after the gather
// (docs/bootstrap-hierarchy.md#abort-frames): between gathers the watchers
// (watch.go) leave a hang-up without an abort alone, since a neighbour done
// with its world closes its links too. But a neighbour cannot be done with a
// world that still owes this rank a message: a point-to-point Recv still
// waiting for rank r to connect, or a Send still connecting to r, ends when
// r's ring link with this rank closes or resets, naming r dead with its
// listen address and BOOTSTRAP_PHASE_PEER, as the C ranks do in socket.c's
// wait_fd. What r sent before it went is given peerGoneGrace to arrive.
// This rank's own timeout still names no one (peerGone).

// errRingLinkEnded is a point-to-point wait cut short because the peer's
// ring link with this rank ended with no abort on it.
var errRingLinkEnded = errors.New("its ring link with this rank ended, with no abort, while this rank still waited for its point-to-point message")

// peerGoneGrace is how long a wait whose peer's ring link ended still
// takes a connection from it that was on its way (libnccom's
// NCCOM_ABORT_WAIT_MS is 100 ms; the Go acceptor also reads the opening
// before it hands the connection over, so a little more).
const peerGoneGrace = 200 * time.Millisecond

// ringGone is, per rank, a context cancelled once that rank's ring link
// with this rank ended after the gather with no abort on it; only ring
// neighbours' are ever cancelled. Each is made on first use, so a rank
// that talks to a few peers of a world of N holds a few, not N; and a
// context, not a channel, so a dial watches it with context.AfterFunc
// instead of a goroutine of its own (dialWatching).
type ringGone struct {
	size int
	mu   sync.Mutex
	m    map[int]*goneCtx
}

type goneCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newRingGone(size int) ringGone { return ringGone{size: size} }

func (g *ringGone) get(rank int) *goneCtx {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[int]*goneCtx{}
	}
	c := g.m[rank]
	if c == nil {
		c = &goneCtx{}
		c.ctx, c.cancel = context.WithCancel(context.Background())
		g.m[rank] = c
	}
	return c
}

// mark records that rank's ring link ended; a rank of -1 (not a ring
// neighbour) is ignored.
func (g *ringGone) mark(rank int) {
	if rank < 0 || rank >= g.size {
		return
	}
	g.get(rank).cancel()
}

// of is the context cancelled when rank's ring link ends.
func (g *ringGone) of(rank int) context.Context { return g.get(rank).ctx }

func isClosed(c context.Context) bool { return c != nil && c.Err() != nil }

// linkEnded is the fault of a peer whose ring link ended while this rank
// waited for it: the peer, named dead, with its listen address.
func (e *Endpoint) linkEnded(peer int, what string) error {
	return &ringFault{phase: abi.BootstrapPhasePeer, step: -1, dead: peer, addr: e.peers[peer],
		err: fmt.Errorf("%s: %w", what, errRingLinkEnded)}
}

// awaitPeer is Recv's wait for peer to connect, within the socket timeout:
// it ends with the connection, with the endpoint's failure, with the
// timeout (this rank's own, naming no one), or when peer's ring link ends
// and nothing from it arrives within peerGoneGrace.
func (e *Endpoint) awaitPeer(peer int) (*link, error) {
	t := e.n.cfg.Timeout
	timer := time.NewTimer(t)
	defer timer.Stop()
	// Until peer's ring link ends, gone is its channel and grace nil; then
	// gone is nil and grace the peerGoneGrace left for its connection.
	gone := e.gone.of(peer).Done()
	var grace <-chan time.Time
	for {
		select {
		case l := <-e.inbox[peer]:
			return l, nil
		case <-e.st.done:
			return nil, e.st.cause()
		case <-timer.C:
			return nil, e.peerGone(peer, fmt.Errorf("waiting for %s: it did not connect within %s (%s)", e.peerName(peer), t, abi.EnvSockTimeout))
		case <-gone:
			g := time.NewTimer(peerGoneGrace)
			defer g.Stop()
			gone, grace = nil, g.C
		case <-grace:
			return nil, e.linkEnded(peer, fmt.Sprintf("waiting for %s to connect", e.peerName(peer)))
		}
	}
}
