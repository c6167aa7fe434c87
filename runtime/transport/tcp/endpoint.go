package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport"
)

// Endpoint is one rank of a bootstrapped world (libnccom's extState): its
// listener, its two ring sockets, every rank's listen address and the
// point-to-point sockets opened on first use. It is a transport.Transport.
//
// Every operation is bounded by the socket timeout, and all of them by the
// context InitFlat was given: once it ends, every operation blocked on the
// endpoint returns at once with an error wrapping context.Cause (and later
// ones fail with it). Send, Recv and AllGather are transport.Transport's,
// which take no context, so the endpoint keeps the one it was made with, as
// exec.CommandContext's process does. When one fails because a peer did, the endpoint tells every other rank (an ABORT naming the peer),
// so they fail with the same cause instead of timing out one by one.
type Endpoint struct {
	n          *Net
	rank, size int
	root       netip.AddrPort
	me         netip.AddrPort
	peers      []netip.AddrPort // peerCommAddresses
	cluster    uint64
	epoch      int64

	ln                   *net.TCPListener // extListenFd
	ringSend, ringRecv   *link            // extRingSendFd, extRingRecvFd; the intra ring's when hier
	interSend, interRecv *link            // a leader's inter-instance ring (docs/bootstrap-hierarchy.md)
	hier                 *shape           // nil: flat
	span                 rootSpan         // the ranks of this rank's root
	table                []byte           // InitComm's gathered peer records
	maps                 *GlobalMaps      // a global InitComm's maps from them
	st                   *abortState

	ringMu sync.Mutex
	// relayed, set for one AllGatherRecords under ringMu, holds each
	// record received to its slot's rank before it is passed on.
	relayed  *recordCheck
	watching watch // the ring's watchers between gathers (watch.go), under ringMu
	sendMu   []sync.Mutex
	sendc    []*link // peerCommSendFd
	// wire[r] is held by every frame write on sendc[r] and by its setting,
	// so a failing rank's abort lands between frames (peerabort.go).
	wire          []sync.Mutex
	recvMu        []sync.Mutex
	recvc         []*link // peerCommRecvFd
	inbox         []chan *link
	gone          ringGone // ring neighbours whose link ended after the gather (ringgone.go)
	wg            sync.WaitGroup
	failOnce      sync.Once
	abortOnce     sync.Once   // floodAbort
	ringAbortOnce sync.Once   // tellRingsExtended
	gathering     atomic.Bool // in AllGather: its ring links carry the gather
	closeOnce     sync.Once
}

var _ transport.Transport = (*Endpoint)(nil)

// hangUpGrace is how long a rank whose peer hung up waits for the ABORT
// that may explain it before it reports the hang-up as the cause. A
// variable for the planted fault of TestHangUpExplainedByTheRing.
var hangUpGrace = 250 * time.Millisecond

// smallBlock is the all-gather block size up to which a ring step sends and
// then receives: far below any socket buffer.
const smallBlock = 4096

func newEndpoint(ctx context.Context, n *Net, ln *net.TCPListener, root netip.AddrPort, rank, size int) *Endpoint {
	ta := ln.Addr().(*net.TCPAddr).AddrPort()
	e := &Endpoint{
		n: n, rank: rank, size: size, root: root, ln: ln,
		me:     netip.AddrPortFrom(ta.Addr().Unmap(), ta.Port()),
		peers:  make([]netip.AddrPort, size),
		st:     newAbortState(ctx, cancelledErr),
		sendMu: make([]sync.Mutex, size), sendc: make([]*link, size), wire: make([]sync.Mutex, size),
		recvMu: make([]sync.Mutex, size), recvc: make([]*link, size),
		inbox: make([]chan *link, size),
		gone:  newRingGone(size),
	}
	for i := range e.inbox {
		e.inbox[i] = make(chan *link, 1)
	}
	e.st.deaf = n.cfg.Hooks != nil && n.cfg.Hooks.Deaf
	e.st.add(ln)
	return e
}

// Rank and Size describe this endpoint's place in the world.
func (e *Endpoint) Rank() int { return e.rank }
func (e *Endpoint) Size() int { return e.size }

// Prev and Next are the ring neighbours: on a hierarchical world, the
// intra-instance ring's.
func (e *Endpoint) Prev() int {
	if e.hier != nil {
		return e.hier.intraPrev()
	}
	return (e.rank - 1 + e.size) % e.size
}

func (e *Endpoint) Next() int {
	if e.hier != nil {
		return e.hier.intraNext()
	}
	return (e.rank + 1) % e.size
}

// ClusterID and Epoch are the root's reply, the same on every rank.
func (e *Endpoint) ClusterID() uint64 { return e.cluster }
func (e *Endpoint) Epoch() int64      { return e.epoch }

// Root is the root the world was bootstrapped through; Addr this rank's
// listen address; Peers every rank's (peerCommAddresses).
func (e *Endpoint) Root() netip.AddrPort    { return e.root }
func (e *Endpoint) Addr() netip.AddrPort    { return e.me }
func (e *Endpoint) Peers() []netip.AddrPort { return append([]netip.AddrPort(nil), e.peers...) }

func (e *Endpoint) errf(format string, args ...any) error {
	return fmt.Errorf("rank %d: "+format, append([]any{e.rank}, args...)...)
}

func (e *Endpoint) peerName(r int) string {
	if e.peers[r].IsValid() {
		return fmt.Sprintf("rank %d (%s)", r, e.peers[r])
	}
	return fmt.Sprintf("rank %d", r)
}

// claimed names the party at the other end of an accepted connection by
// the rank its opening claims and the address it came from: the claim is
// unauthenticated, so a failure or an ABORT on the connection is put down to
// the address as much as to the rank (docs/bootstrap.md#bounds-and-tests).
func claimed(rank int, c net.Conn) string {
	return fmt.Sprintf("rank %d (peer %s)", rank, c.RemoteAddr())
}

func (e *Endpoint) check(peer int) error {
	if peer < 0 || peer >= e.size || peer == e.rank {
		return e.errf("peer %d is not another rank of this world of %d", peer, e.size)
	}
	if c := e.st.cause(); c != nil {
		return e.fail(c)
	}
	return nil
}

// Send delivers data to peer over the connection opened on the first send.
// The opening and the first message go out in one write, so the peer
// reads them in one wake-up instead of three
// (docs/benchmarks.md#the-agree-phase-s-cpu-2026-12-04); the bytes are
// those of three writes.
func (e *Endpoint) Send(peer int, data []byte) error {
	if err := e.check(peer); err != nil {
		return err
	}
	e.sendMu[peer].Lock()
	defer e.sendMu[peer].Unlock()
	l := e.sendc[peer]
	var out net.Buffers
	if l == nil {
		var err error
		if l, err = dialWatching(e.peers[peer].String(), e.peerName(peer), e.n.cfg.Timeout, e.st, e.gone.of(peer)); err != nil {
			return e.fail(e.peerGone(peer, err))
		}
		e.st.add(l.c)
		e.wire[peer].Lock()
		e.sendc[peer] = l
		e.wire[peer].Unlock()
		out = e.peerOpening()
	}
	out = append(out, e.msgOut(abi.BootstrapMsgPeerData, data)...)
	e.wire[peer].Lock()
	err := l.writeAll("sending "+msgName(abi.BootstrapMsgPeerData)+" to", out)
	e.wire[peer].Unlock()
	if err != nil {
		var hu *hangUp
		if errors.As(err, &hu) && !e.n.cfg.Extended {
			// A peer that left a failed world said why before it hung up.
			if ra := salvageAbort(l); ra != nil {
				return e.fail(ra)
			}
		}
		return e.fail(e.peerGone(peer, err), l)
	}
	if h := e.n.cfg.Hooks.AfterPeerSend; h != nil {
		h()
	}
	return nil
}

// Prepare opens the point-to-point connections to peers that this rank's
// next sends will take, in that order, in one goroutine, and returns
// without waiting: an exchange calls it when it begins, so its sends find
// their connections open instead of dialling on its critical path
// (docs/bootstrap-hierarchy.md#the-agree-phase). One goroutine, not one
// per dial: a loopback connect does the handshake inside the syscall, so
// parallel dials only add threads (each blocked connect hands its P to
// another). The opening goes out at once, so the peer's acceptor has
// handed the connection over before the message comes. Each peer's send
// lock is taken here and held until its dial ends, so a Send to a peer
// still being prepared waits for that dial, not for the others. A dial or
// opening that fails here leaves no connection: the Send dials again and
// reports its own failure as before, so nothing is lost or hidden.
func (e *Endpoint) Prepare(peers []int) {
	var todo []int
	for _, p := range peers {
		if p < 0 || p >= e.size || p == e.rank || e.st.cause() != nil || slices.Contains(todo, p) {
			continue
		}
		e.sendMu[p].Lock()
		if e.sendc[p] != nil {
			e.sendMu[p].Unlock()
			continue
		}
		todo = append(todo, p)
	}
	if len(todo) == 0 {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for _, p := range todo {
			e.prepareOne(p)
			e.sendMu[p].Unlock()
		}
	}()
}

// prepareOne is one of Prepare's dials, under peer p's send lock.
func (e *Endpoint) prepareOne(p int) {
	if e.st.cause() != nil {
		return
	}
	l, err := dialWatching(e.peers[p].String(), e.peerName(p), e.n.cfg.Timeout, e.st, e.gone.of(p))
	if err != nil {
		return
	}
	e.st.add(l.c)
	if l.writeAll("sending its opening to", e.peerOpening()) != nil {
		l.close()
		return
	}
	e.wire[p].Lock()
	e.sendc[p] = l
	e.wire[p].Unlock()
}

// peerGone names a point-to-point failure whose peer is gone — its
// connection reset or closed under this rank — as a fault of that rank,
// so that the abort this rank floods names it, its address and the phase
// (docs/bootstrap-hierarchy.md#abort-frames): the ranks that only wait
// for the world's next step hear of it through the ring instead of at
// their timeouts. Any other failure is returned as it is.
func (e *Endpoint) peerGone(peer int, err error) error {
	var ab *AbortError
	var ra *RingAbortError
	if errors.As(err, &ab) || errors.As(err, &ra) || e.st.cause() != nil {
		return err
	}
	var hu *hangUp
	if !errors.As(err, &hu) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, errRingLinkEnded) {
		// This rank's own wait ran out, or the peer broke the protocol:
		// the world hears of it, but no rank is named dead — the peer it
		// waited for may be alive and waiting on another.
		return &ringFault{phase: abi.BootstrapPhasePeer, step: -1, dead: -1, self: true, err: err}
	}
	return &ringFault{phase: abi.BootstrapPhasePeer, step: -1, dead: peer, addr: e.peers[peer], err: err}
}

// Recv reads peer's next message, which must be exactly len(data) bytes.
func (e *Endpoint) Recv(peer int, data []byte) error {
	if err := e.check(peer); err != nil {
		return err
	}
	e.recvMu[peer].Lock()
	defer e.recvMu[peer].Unlock()
	l := e.recvc[peer]
	if l == nil {
		var err error
		if l, err = e.awaitPeer(peer); err != nil {
			return e.fail(err)
		}
		e.recvc[peer] = l
	}
	if err := e.recvOn(l, abi.BootstrapMsgPeerData, data); err != nil {
		return e.fail(e.peerGone(peer, err), l)
	}
	return nil
}

// openPeer writes peerOpening alone (the tests' fake peers open with it).
func (e *Endpoint) openPeer(l *link) error {
	return l.writeAll("sending its opening to", e.peerOpening())
}

// peerOpening is what a new point-to-point connection opens with: the
// extended HELLO, or upstream's framed {rank}{tag} (two frames, as upstream
// sends them; the bytes are the same in one write).
func (e *Endpoint) peerOpening() net.Buffers {
	if e.n.cfg.Extended {
		return msgBufs(abi.BootstrapMsgHello, e.hello(abi.BootstrapChannelPeer))
	}
	return append(frameBufs(putInt(e.rank)), frameBufs(putInt(int(abi.BootstrapP2PTag)))...)
}

// msgOut is one message in the endpoint's framing, ready for writeAll.
func (e *Endpoint) msgOut(typ uint32, data []byte) net.Buffers {
	if e.n.cfg.Extended {
		return msgBufs(typ, data)
	}
	return frameBufs(data)
}

// sendOn and recvOn move one message in the endpoint's framing (typ only
// matters to the extended one).
func (e *Endpoint) sendOn(l *link, typ uint32, data []byte) error {
	if e.n.cfg.Extended {
		return l.send(typ, data)
	}
	return l.sendFrame(data, msgName(typ))
}

func (e *Endpoint) recvOn(l *link, typ uint32, data []byte) error {
	if e.n.cfg.Extended {
		return l.recv(typ, data)
	}
	return l.recvExact(data, msgName(typ))
}

// AllGather is bootstrapRingAllGather: size-1 steps round the ring, each
// passing on the block received in the step before; on a hierarchical world
// the three phases of docs/bootstrap-hierarchy.md, (L-1)+(H-1)+(L-1) steps.
func (e *Endpoint) AllGather(data []byte) error {
	if c := e.st.cause(); c != nil {
		return e.fail(c)
	}
	if len(data)%e.size != 0 {
		return e.errf("all-gather of %d bytes does not split into %d blocks", len(data), e.size)
	}
	if e.size == 1 {
		return nil
	}
	e.ringMu.Lock()
	defer e.ringMu.Unlock()
	e.unwatchRings()
	e.gathering.Store(true)
	defer e.gathering.Store(false)
	if err := e.gather(data); err != nil {
		return e.fail(err)
	}
	e.watchRings()
	return nil
}

// Context ends when the endpoint fails — a peer's abort heard in a gather,
// on its listener or on a ring link between gathers (watch.go) — or
// closes; context.Cause says why. A rank runs the phases after its
// bootstrap under it, so that a world that fails after this rank's gather
// ends them at once with the dead rank's name instead of at their own
// timeouts (docs/bootstrap-hierarchy.md#abort-frames).
func (e *Endpoint) Context() context.Context { return e.st.ctx }

// recordCheck is what AllGatherRecords holds every received record to.
type recordCheck struct {
	size  int                              // bytes per rank
	check func(rank int, rec []byte) error // nil: the record may sit in rank's slot
}

// AllGatherRecords is AllGather of one size-byte record per rank, each
// record held to check as it arrives, before it is passed on: a record
// that fails is blamed on the party it came from, which forged it or took
// it from a forger unchecked. Every rank checks before it relays, so the
// first honest rank after a forging relay names that relay, not the rank
// whose slot was forged (docs/bootstrap-hierarchy.md#forged-relays).
func (e *Endpoint) AllGatherRecords(data []byte, size int, check func(rank int, rec []byte) error) error {
	if size <= 0 || len(data) != size*e.size {
		return e.errf("all-gather of %d bytes is not %d records of %d bytes", len(data), e.size, size)
	}
	e.ringMu.Lock()
	e.relayed = &recordCheck{size: size, check: check}
	e.ringMu.Unlock()
	defer func() {
		e.ringMu.Lock()
		e.relayed = nil
		e.ringMu.Unlock()
	}()
	return e.AllGather(data)
}

// relayOut is out as this rank sends it: out, unless a test's
// Hooks.Relay forges it.
func (e *Endpoint) relayOut(out []byte) []byte {
	if h := e.n.cfg.Hooks; h != nil && h.Relay != nil {
		rec := 0
		if e.relayed != nil {
			rec = e.relayed.size
		}
		return h.Relay(out, rec)
	}
	return out
}

// verifyRelayed holds the records of in (the slots of ranks first...)
// that from sent to the AllGatherRecords check in progress, if any.
func (e *Endpoint) verifyRelayed(from *link, first int, in []byte) error {
	c := e.relayed
	if c == nil || c.check == nil {
		return nil
	}
	for i := 0; i+c.size <= len(in); i += c.size {
		rank := first + i/c.size
		if err := c.check(rank, in[i:i+c.size]); err != nil {
			return fmt.Errorf("a forged record in rank %d's slot (%v): the forger is %s, which relayed it, not rank %d", rank, err, from.peer, rank)
		}
	}
	return nil
}

// ringSteps is bootstrapRingAllGather over one ring (send to the
// successor, receive from the predecessor) of len(bounds)-1 parties, this
// one at position k: party j's slice is data[bounds[j]:bounds[j+1]], and at
// step i it sends slice (k - i) mod n and receives slice (k - i - 1) mod n.
// The flat ring, the intra-instance ring and the leaders' ring of instance
// blocks (whose last block may be short) all run it; with
// Config.Bidirectional they run ringStepsBidir instead. A failure is
// named with the ring's phase and the step (docs/bootstrap-hierarchy.md#abort-frames).
func (e *Endpoint) ringSteps(send, recv *link, data []byte, bounds []int, k, rank0 int, phase uint32) error {
	if e.n.cfg.Bidirectional {
		return e.ringStepsBidir(send, recv, data, bounds, k, rank0, phase)
	}
	n := len(bounds) - 1
	rankOf := func(r int) int { // the rank of slice r's first record
		if e.relayed == nil {
			return 0
		}
		return rank0 + bounds[r]/e.relayed.size
	}
	for step := 0; step < n-1; step++ {
		if err := e.plantedDeath(phase, step); err != nil {
			return err
		}
		s := (k - step + n) % n
		r := (k - step - 1 + n) % n
		ops := []ringOp{
			{l: send, send: true, buf: e.relayOut(data[bounds[s]:bounds[s+1]])},
			{l: recv, buf: data[bounds[r]:bounds[r+1]], first: rankOf(r)},
		}
		if l, err := e.exchange(ops, true); err != nil {
			return e.ringFailed(l, phase, step, err)
		}
	}
	return nil
}

func (e *Endpoint) sendHello(l *link, channel uint32) error {
	return l.send(abi.BootstrapMsgHello, e.hello(channel))
}

// hello is this rank's HELLO payload for channel.
func (e *Endpoint) hello(channel uint32) []byte {
	var b [abi.SizeofBootstrapPeerHello]byte
	h := abi.BootstrapPeerHello{Sanity: abi.BootstrapSanity, Rank: int32(e.rank), Nranks: int32(e.size), Channel: channel}
	h.MarshalTo(b[:])
	return b[:]
}

func (e *Endpoint) readHello(l *link) (abi.BootstrapPeerHello, error) {
	var h abi.BootstrapPeerHello
	var b [abi.SizeofBootstrapPeerHello]byte
	if err := l.recv(abi.BootstrapMsgHello, b[:]); err != nil {
		return h, err
	}
	h.UnmarshalFrom(b[:])
	switch {
	case h.Sanity != abi.BootstrapSanity:
		return h, fmt.Errorf("%s sent a HELLO with sanity magic %#08x, expected %#08x: not a bootstrap peer of this release", l.peer, h.Sanity, abi.BootstrapSanity)
	case int(h.Nranks) != e.size:
		return h, fmt.Errorf("%s is a rank of a world of %d, this world has %d", l.peer, h.Nranks, e.size)
	case h.Rank < 0 || int(h.Rank) >= e.size || int(h.Rank) == e.rank:
		return h, fmt.Errorf("%s claims rank %d, not another rank of this world of %d", l.peer, h.Rank, e.size)
	}
	return h, nil
}

// startAcceptor takes the point-to-point connections peers open and the
// ABORTs failing peers send, for as long as the endpoint lives.
func (e *Endpoint) startAcceptor() {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := e.ln.Accept()
			if err != nil {
				if e.st.cause() == nil && !errors.Is(err, net.ErrClosed) {
					e.n.log.Warn("bootstrap listener failed", "rank", e.rank, "err", err)
				}
				return
			}
			e.st.add(c)
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				if e.n.cfg.Extended {
					e.greet(c)
				} else {
					e.greetDefault(c)
				}
			}()
		}
	}()
}

func (e *Endpoint) greet(c net.Conn) {
	l := &link{c: c, peer: "peer " + c.RemoteAddr().String(), timeout: e.n.cfg.Timeout, st: e.st}
	h, err := e.readHello(l)
	if err != nil {
		if e.st.cause() == nil {
			e.n.log.Warn("bootstrap: refused a connection", "rank", e.rank, "err", err)
		}
		l.close()
		return
	}
	l.peer = claimed(int(h.Rank), c)
	switch h.Channel {
	case abi.BootstrapChannelPeer:
		select {
		case e.inbox[h.Rank] <- l:
		default:
			e.n.log.Warn("bootstrap: a second connection from one peer", "rank", e.rank, "peer", l.peer)
			l.close()
		}
	case abi.BootstrapChannelAbort:
		_, _, err := l.recvAny("reading its ABORT", int(abi.BootstrapAbortTextMax), false)
		var ab *AbortError
		if errors.As(err, &ab) {
			e.st.abort(ab)
		}
		l.close()
	default:
		e.n.log.Warn("bootstrap: unexpected channel", "rank", e.rank, "peer", l.peer, "channel", h.Channel)
		l.close()
	}
}

// fail turns an operation's error into the endpoint's: the first failure
// that is not an ABORT from elsewhere is told to every other rank, and every
// blocked operation is cut short with it.
// also are point-to-point links the failing operation holds (default
// framing): they hear the abort too (floodAbort).
func (e *Endpoint) fail(err error, also ...*link) error {
	if c := e.st.cause(); c != nil {
		if errors.Is(c, errClosed) {
			return e.errf("the endpoint is closed")
		}
		// Failed by what another rank said (an ABORT on the listener): the
		// point-to-point peers still hear it, once.
		if worldFailed(c) {
			e.floodAbort(c, also...)
			if e.n.cfg.Extended {
				e.tellRingsExtended(c)
			}
		}
		return e.errf("%w", c)
	}
	var hu *hangUp
	var rf *ringFault
	if (errors.As(err, &hu) && e.n.cfg.Extended) || (errors.As(err, &rf) && rf.phase == abi.BootstrapPhasePeer && rf.dead >= 0) {
		// Give the ABORT that made the peer hang up a moment to arrive: a
		// point-to-point peer that left because the world failed elsewhere
		// told its ring links, not a rank still dialling it, and its abort
		// comes round the ring (in either framing; libnccom's peer_fail.c
		// waits as long).
		t := time.NewTimer(min(e.n.cfg.Timeout, hangUpGrace))
		select {
		case <-e.st.done:
			t.Stop()
			return e.fail(err)
		case <-t.C:
		}
	}
	e.floodAbort(err, also...)
	var ab *AbortError
	if !errors.As(err, &ab) && e.n.cfg.Extended && !errors.Is(err, errPlantedDeath) {
		e.failOnce.Do(func() { e.broadcastAbort(e.errf("%w", err).Error()) })
	}
	e.st.abort(err)
	if e.n.cfg.Extended {
		e.tellRingsExtended(e.st.cause())
	}
	return e.errf("%w", e.st.cause())
}

// broadcastAbort opens an ABORT connection to every other rank (one try
// each, bounded by the timeout) and sends the reason.
func (e *Endpoint) broadcastAbort(reason string) {
	if len(reason) > int(abi.BootstrapAbortTextMax) {
		reason = reason[:abi.BootstrapAbortTextMax]
	}
	t := min(e.n.cfg.Timeout, 2*time.Second)
	var wg sync.WaitGroup
	for r, ap := range e.peers {
		if r == e.rank || !ap.IsValid() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bounded by the caller's context, not the state's: when two
			// ranks fail at once each hears the other's ABORT while it
			// broadcasts its own, and the state's end would cut both
			// broadcasts short, leaving the ranks neither had reached yet to
			// a torn ring and a wrong name (TestRankDiesMidGather).
			ctx, cancel := context.WithTimeout(e.st.parent, t)
			defer cancel()
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", ap.String())
			if err != nil {
				return
			}
			l := &link{c: c, peer: e.peerName(r), timeout: t}
			defer l.close()
			// The caller's context ending cuts the telling short too.
			defer context.AfterFunc(e.st.parent, func() { _ = c.SetDeadline(time.Unix(1, 0)) })()
			if e.sendHello(l, abi.BootstrapChannelAbort) == nil {
				_ = l.send(abi.BootstrapMsgAbort, []byte(reason))
			}
		}()
	}
	wg.Wait()
	e.n.log.Error(reason)
}

// Close releases the endpoint: its listener and every socket. Operations
// still blocked return an error.
func (e *Endpoint) Close() error {
	if e == nil {
		return nil
	}
	e.closeOnce.Do(func() {
		if c := e.st.cause(); worldFailed(c) {
			// A rank that leaves a failed world says why on every link
			// first, though no operation of its own met the failure
			// (docs/bootstrap-hierarchy.md#abort-frames); once per endpoint.
			e.floodAbort(c)
		}
		e.st.abort(errClosed)
		e.ln.Close()
		e.wg.Wait()
		e.ringMu.Lock()
		e.unwatchRings()
		e.ringSend.close()
		e.ringRecv.close()
		e.interSend.close()
		e.interRecv.close()
		e.ringMu.Unlock()
		for r := range e.peers {
			e.sendMu[r].Lock()
			e.sendc[r].close()
			e.sendMu[r].Unlock()
			e.recvMu[r].Lock()
			e.recvc[r].close()
			select {
			case l := <-e.inbox[r]:
				l.close()
			default:
			}
			e.recvMu[r].Unlock()
		}
	})
	return nil
}
