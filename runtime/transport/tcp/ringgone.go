package tcp

import (
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

// ringGone is, per rank, a channel closed once that rank's ring link with
// this rank ended after the gather with no abort on it; only ring
// neighbours' are ever closed.
type ringGone struct {
	ch   []chan struct{}
	once []sync.Once
}

func newRingGone(size int) ringGone {
	g := ringGone{ch: make([]chan struct{}, size), once: make([]sync.Once, size)}
	for i := range g.ch {
		g.ch[i] = make(chan struct{})
	}
	return g
}

// mark records that rank's ring link ended; a rank of -1 (not a ring
// neighbour) is ignored.
func (g *ringGone) mark(rank int) {
	if rank < 0 || rank >= len(g.ch) {
		return
	}
	g.once[rank].Do(func() { close(g.ch[rank]) })
}

// of is the channel closed when rank's ring link ends.
func (g *ringGone) of(rank int) <-chan struct{} { return g.ch[rank] }

func isClosed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

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
	gone := e.gone.of(peer)
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
