package tcp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// Root is the bootstrap root (bootstrapCreateRoot + bootstrapRootFlat): a
// listener that takes one INFO_TO_ROOT record from each of nranks ranks,
// refuses a world with a bad magic, a duplicate or out-of-range rank, a wrong
// nranks or (global init) differing git-hash tags, replies INFO_FROM_ROOT
// (cluster_id, epoch, the ring successor's listen address) and stays with
// the ranks until every one has wired its ring. Any failure is sent to every
// rank as an ABORT naming the peer at fault.
type Root struct {
	n      *Net
	ln     *net.TCPListener
	addr   netip.AddrPort
	nranks int
	global bool
	// perInstance is L (Config.PerInstance); hier the dispatch
	// (Hierarchical): the root's records and replies are the 2-tier ones.
	perInstance int
	hier        bool
	ring        *rootRing // nil: the world's only root
	cluster     uint64
	epoch       int64

	st         *abortState // Close
	mu         sync.Mutex
	completing bool // every ring is wired; COMPLETE is on its way
	done       chan struct{}
	err        error
}

// CreateRoot starts a root listening at addr (port 0: any free port) for a
// world of nranks; global worlds carry and compare the git-hash tag. ctx
// bounds the root's life: when it ends before the world is complete, the
// root stops waiting at once and Wait returns an error wrapping
// context.Cause(ctx).
func (n *Net) CreateRoot(ctx context.Context, addr netip.AddrPort, nranks int, global bool) (*Root, error) {
	if err := n.rootGate(nranks); err != nil {
		return nil, err
	}
	ln, err := ListenPlain(addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("bootstrap root cannot listen on %s: the port is in use by another process; give %s a free port", addr, abi.EnvRootCommID)
		}
		return nil, fmt.Errorf("bootstrap root cannot listen on %s: %w", addr, err)
	}
	return n.serveRoot(ctx, ln, nranks, global), nil
}

// CreateRootOn starts a root on a listener the caller already holds — e.g.
// one a launcher bound before starting the ranks, so that no rank's own
// ephemeral port can take the root's port first. ctx is CreateRoot's.
func (n *Net) CreateRootOn(ctx context.Context, ln *net.TCPListener, nranks int, global bool) (*Root, error) {
	if err := n.rootGate(nranks); err != nil {
		return nil, err
	}
	return n.serveRoot(ctx, ln, nranks, global), nil
}

// rootGate refuses a root a world cannot have: in a single-vNC process, or
// for no ranks.
func (n *Net) rootGate(nranks int) error {
	c, err := n.vncGate()
	if err != nil {
		return err
	}
	if c != 0 {
		return fmt.Errorf("bootstrapCreateRoot: nrt_get_total_vnc_count() reports %d: a single-vNC process has no world to serve", c)
	}
	if err := CheckWorldSize("bootstrap root: nranks", nranks); err != nil {
		return err
	}
	return nil
}

func (n *Net) serveRoot(ctx context.Context, ln *net.TCPListener, nranks int, global bool) *Root {
	return n.serveRootRing(ctx, ln, nranks, global, nil)
}

// serveRootRing is serveRoot as one root of several (ring non-nil).
func (n *Net) serveRootRing(ctx context.Context, ln *net.TCPListener, nranks int, global bool, ring *rootRing) *Root {
	ta := ln.Addr().(*net.TCPAddr).AddrPort()
	r := &Root{
		ring: ring,
		n:    n, ln: ln, nranks: nranks, global: global,
		perInstance: n.cfg.PerInstance, hier: Hierarchical(global, nranks, n.cfg.PerInstance),
		addr:    netip.AddrPortFrom(ta.Addr().Unmap(), ta.Port()),
		cluster: rand.Uint64(), epoch: time.Now().Unix(),
		done: make(chan struct{}),
	}
	r.st = newAbortState(ctx, func(cause error) error {
		return r.errf("cancelled before the world was complete: %w", cause)
	})
	r.st.add(ln)
	n.log.Info("bootstrap root listening", "addr", r.addr.String(), "nranks", nranks, "global", global, "hierarchical", r.hier, "per_instance", r.perInstance, "cluster_id", fmt.Sprintf("%#016x", r.cluster))
	go func() {
		defer close(r.done)
		defer r.st.release()
		if n.cfg.Extended {
			r.err = r.serve()
		} else {
			r.err = r.serveDefault()
		}
	}()
	return r
}

// Addr is where the root listens.
func (r *Root) Addr() netip.AddrPort { return r.addr }

// ClusterID and Epoch are what the root hands every rank.
func (r *Root) ClusterID() uint64 { return r.cluster }
func (r *Root) Epoch() int64      { return r.epoch }

// Wait blocks until the root is done: nil once every rank has its world,
// otherwise the failure it sent the ranks.
func (r *Root) Wait() error {
	<-r.done
	return r.err
}

// Close stops a root still waiting for ranks, telling those connected; a
// root already sending COMPLETE finishes first.
func (r *Root) Close() error {
	r.mu.Lock()
	if !r.completing {
		r.st.abort(errClosed)
	}
	r.mu.Unlock()
	<-r.done
	return nil
}

func (r *Root) errf(format string, args ...any) error {
	return fmt.Errorf("bootstrap root %s: "+format, append([]any{r.addr}, args...)...)
}

// rankConn is one accepted connection and what it said.
type rankConn struct {
	l        *link
	remote   string
	rank     int // the claimed rank, -1 before the record
	rec      abi.ExtInfoGlobal
	per      uint32 // extInfoHier.per_instance (hierarchical world)
	inst     uint32 // extInfoHier.instance
	gone     bool   // its reader is finished (evGone)
	admitted bool   // its record made it a rank of the world
	replied  bool   // its INFO_FROM_ROOT went out
	done     bool   // its RING_DONE arrived
}

// goneName is who() for a rank that hung up on its root, with what the
// root knows of where it went: the address its peers dial (its record's
// listen address, not its root connection's) and how far it had got
// (docs/bootstrap-hierarchy.md#a-rank-that-hangs-up-on-its-root). The C
// root writes the same (root.c gone_name).
func (rc *rankConn) goneName() string {
	if !rc.admitted {
		return rc.who()
	}
	ap, _ := DecodeAddr(rc.rec.Info.ExtAddressListen)
	phase := "before its INFO_FROM_ROOT"
	switch {
	case rc.done:
		phase = "after its RING_DONE, before COMPLETE"
	case rc.replied:
		phase = "after its INFO_FROM_ROOT went out, before its RING_DONE"
	}
	return fmt.Sprintf("%s (listening on %s, %s)", rc.who(), ap, phase)
}

func (rc *rankConn) who() string {
	if rc.rank < 0 {
		return "peer " + rc.remote
	}
	return fmt.Sprintf("peer %s rank %d", rc.remote, rc.rank)
}

type evKind int

const (
	evConn         evKind = iota // accepted a connection
	evRecord                     // its INFO_TO_ROOT record arrived
	evDone                       // its RING_DONE arrived
	evFailed                     // it broke the protocol, hung up or sent an ABORT
	evGone                       // its reader is finished: the peer hung up
	evAcceptFailed               // the listener timed out or was closed
	evRootConn                   // the previous root's connection and its range (buf)
	evRootRec                    // a record another root sent past the reply (rec)
	evRootLink                   // a roots' link failed or ended (err; forward: the previous root's)
)

type rootEvent struct {
	kind    evKind
	rc      *rankConn
	err     error
	hungUp  bool    // evFailed: the rank closed its root connection, saying nothing
	buf     []byte  // evRootConn: the range record
	rec     rootRec // evRootRec
	forward bool    // evRootLink: the link from the previous root
}

// session is one run of the root: the connections and their events.
type session struct {
	events     chan rootEvent
	quit       chan struct{}
	wg         sync.WaitGroup
	conns      []*rankConn
	acceptDone bool
	// culprit is the connection the root's failure came from, if one did:
	// the failed root waits for it to hang up only briefly (linger).
	culprit *rankConn
	// The roots' links of a multi-root world (rootring_ext.go): prev is
	// the previous root's connection, next the one this root dialed
	// (nextc its dial's result); linked once both carry records past the
	// reply; published once this root told the next of its failure.
	prev, next        *link
	nextc             chan error
	gotNext           bool
	linked, published bool
	// heard: a failure came from another root; one seen here only then
	// is not told back to the roots (they have it).
	heard bool
}

func (s *session) emit(ev rootEvent) bool {
	select {
	case s.events <- ev:
		return true
	case <-s.quit:
		return false
	}
}

// note books the events every phase treats alike.
func (s *session) note(ev rootEvent) {
	switch ev.kind {
	case evConn:
		s.conns = append(s.conns, ev.rc)
	case evGone:
		ev.rc.gone = true
	case evAcceptFailed:
		s.acceptDone = true
	case evRootConn:
		// A root is none of the ranks: it hears no ABORT meant for them.
		for i, rc := range s.conns {
			if rc == ev.rc {
				s.conns = append(s.conns[:i], s.conns[i+1:]...)
				break
			}
		}
	}
}

func (r *Root) serve() error {
	s := &session{events: make(chan rootEvent, 64), quit: make(chan struct{}), nextc: make(chan error, 1)}
	defer func() {
		close(s.quit)
		r.ln.Close()
		for _, rc := range s.conns {
			rc.l.close()
		}
		if r.ring != nil {
			r.hangUpRoots(s)
		}
		s.wg.Wait()
	}()
	if r.ring != nil {
		go func() {
			var err error
			s.next, err = r.dialNextRoot()
			s.nextc <- err
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		r.acceptLoop(s)
	}()
	if err := r.run(s); err != nil {
		if c := r.st.cause(); c != nil {
			// A reader cut short by Close or the context ending reports
			// its own broken read; the cause is what stopped it.
			err = c
		}
		if s.linked && !s.published && !s.heard {
			// The other roots' ranks hear of it too
			// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring).
			r.publish(s, -1, abi.BootstrapRootAbortReport, r.rootText(err))
		}
		return r.abort(s, err)
	}
	return nil
}

// run is the three phases; an error aborts the world.
func (r *Root) run(s *session) error {
	timeout := r.n.cfg.Timeout
	hb := time.NewTicker(max(timeout/3, 10*time.Millisecond))
	defer hb.Stop()

	// Phase 1: one record per rank of this root's range; on a multi-root
	// world also the previous root's range.
	lo, hi := r.span()
	byRank := make([]*rankConn, r.nranks)
	have := 0
	for have < hi-lo || r.ring != nil && s.prev == nil {
		select {
		case ev := <-s.events:
			s.note(ev)
			switch ev.kind {
			case evRecord:
				if err := r.admit(ev.rc, byRank); err != nil {
					s.culprit = ev.rc
					return err
				}
				have++
				r.n.log.Debug("bootstrap root: record", "rank", ev.rc.rank, "peer", ev.rc.remote, "have", have, "nranks", r.nranks)
			case evRootConn:
				if s.prev != nil {
					return r.errf("root ring: a second root connection from peer %s (the previous root is %s)", ev.rc.remote, s.prev.peer)
				}
				if ev.err != nil {
					return r.errf("root ring: %v", ev.err)
				}
				if err := r.takeRange(ev.rc, ev.buf); err != nil {
					return r.errf("root ring: %v", err)
				}
				s.prev = ev.rc.l
			case evAcceptFailed:
				if c := r.st.cause(); c != nil {
					return c
				}
				if have == hi-lo {
					return r.errf("root ring: the previous %s did not connect within %s (%s)", r.rootName(r.ring.prev()), timeout, abi.EnvSockTimeout)
				}
				return r.errf("no INFO_TO_ROOT from %s within %s (%s): %d of %d ranks arrived%s",
					rankList(missing(byRank, nil, lo, hi)), timeout, abi.EnvSockTimeout, have, hi-lo, s.unrecorded())
			case evFailed:
				s.culprit = ev.rc
				return r.explain(s, ev)
			case evDone:
				s.culprit = ev.rc
				return r.errf("%s sent RING_DONE before it had its INFO_FROM_ROOT", ev.rc.who())
			}
		case <-hb.C:
			r.heartbeat(byRank, have)
		case <-r.st.done:
			return r.st.cause()
		}
	}
	r.ln.Close()
	if r.global {
		if err := r.checkGitHashes(byRank[lo:hi]); err != nil {
			return err
		}
	}
	table, err := r.linkRoots(s, byRank)
	if err != nil {
		return err
	}

	// Phase 2: every rank learns its ring successor.
	for rank := lo; rank < hi; rank++ {
		if err := byRank[rank].l.send(abi.BootstrapMsgInfoFromRoot, r.reply(table, rank)); err != nil {
			return r.errf("%v", err)
		}
		byRank[rank].replied = true
	}

	// Phase 3: stay until every ring is wired — on a multi-root world
	// every range's (doneFrom: the other roots').
	wired := make([]bool, r.nranks)
	done := 0
	var doneFrom []bool
	others, sentDone := 0, false
	if r.ring != nil {
		doneFrom = make([]bool, len(r.ring.roots))
	}
	complete := func() bool {
		if r.ring == nil {
			return done == hi-lo
		}
		return sentDone && others == len(r.ring.roots)-1
	}
	completed := false // the planted fault sent it already
	sendComplete := func() {
		if completed {
			return
		}
		completed = true
		for _, rc := range byRank[lo:hi] {
			if err := rc.l.send(abi.BootstrapMsgComplete, nil); err != nil {
				r.n.log.Warn("bootstrap root: COMPLETE not delivered", "rank", rc.rank, "err", err)
			}
		}
	}
	last := time.Now()
	for !complete() {
		select {
		case ev := <-s.events:
			s.note(ev)
			switch ev.kind {
			case evDone:
				ev.rc.done = true
				if !wired[ev.rc.rank] {
					wired[ev.rc.rank] = true
					done++
				}
				last = time.Now()
				if r.ring != nil && done == hi-lo && !sentDone {
					sentDone = true
					if err := s.next.sendFrame(doneRecord(r.ring.index, len(r.ring.roots), hi-lo), "its range's done record"); err != nil {
						return r.errf("root ring: %v", err)
					}
					if r.n.cfg.plantCompleteEarly {
						// The planted fault: COMPLETE on this range's RING_DONE alone.
						sendComplete()
					}
				}
			case evRootRec:
				if !ev.rec.done {
					return r.explain(s, ev)
				}
				if doneFrom[ev.rec.origin] {
					return r.errf("root ring: %s relayed root %d's done record twice (each goes round once)", s.prev.peer, ev.rec.origin)
				}
				doneFrom[ev.rec.origin] = true
				others++
				last = time.Now()
				r.relay(s.next, ev.rec)
			case evRootLink:
				if err := r.rootLinkFailed(ev); err != nil {
					return err
				}
			case evFailed:
				if completed && ev.hungUp {
					continue // the planted fault's ranks are done with it
				}
				s.culprit = ev.rc
				return r.explain(s, ev)
			case evConn:
				s.culprit = ev.rc
				return r.errf("%s connected after the world was gathered", ev.rc.who())
			}
		case <-hb.C:
			if time.Since(last) > 2*timeout {
				if done < hi-lo {
					return r.errf("%s did not report a wired ring within %s", rankList(missing(byRank, wired, lo, hi)), 2*timeout)
				}
				return r.errf("root ring: the ranges of %s did not report done within %s", rootList(doneFrom, r.ring.index), 2*timeout)
			}
			r.heartbeat(byRank, done)
		case <-r.st.done:
			return r.st.cause()
		}
	}
	r.mu.Lock()
	if c := r.st.cause(); c != nil {
		r.mu.Unlock()
		return c
	}
	r.completing = true
	r.mu.Unlock()
	sendComplete()
	r.n.log.Info("bootstrap root: world complete", "addr", r.addr.String(), "nranks", r.nranks)
	return nil
}

func (r *Root) acceptLoop(s *session) {
	for {
		_ = r.ln.SetDeadline(time.Now().Add(r.n.cfg.Timeout))
		c, err := r.ln.Accept()
		if err != nil {
			s.emit(rootEvent{kind: evAcceptFailed, err: err})
			return
		}
		remote := c.RemoteAddr().String()
		rc := &rankConn{l: &link{c: c, peer: "peer " + remote, timeout: r.n.cfg.Timeout, st: r.st}, remote: remote, rank: -1}
		r.st.add(c)
		if !s.emit(rootEvent{kind: evConn, rc: rc}) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			r.readRank(rc, s)
		}()
	}
}

// readRank reads a rank's record, then watches its connection for RING_DONE,
// an ABORT or a hang-up; whatever goes wrong, it reads on until the peer
// hangs up, so the root never closes a socket with data unread (which would
// reset it and could destroy the ABORT on its way to the peer).
func (r *Root) readRank(rc *rankConn, s *session) {
	defer s.emit(rootEvent{kind: evGone, rc: rc})
	failed := func(err error) {
		s.emit(rootEvent{kind: evFailed, rc: rc, err: err})
		_ = rc.l.c.SetReadDeadline(time.Time{})
		_, _ = io.Copy(io.Discard, rc.l.in())
	}
	size, what := r.recordSize()
	h, err := rc.l.recvHeader("waiting for its INFO_TO_ROOT record", false)
	if err != nil {
		failed(r.errf("%v", err))
		return
	}
	if r.ring != nil && h.Type == abi.SizeofBootstrapRootRange && h.Length == abi.BootstrapRootSanity {
		// The previous root's range, a default frame: its size prefix and
		// magic are no extended header (no message type is 32).
		r.takeRootConn(rc, s)
		return
	}
	if h.Type != abi.BootstrapMsgInfoToRoot {
		failed(r.errf("%s sent %s where its INFO_TO_ROOT record was due: not a bootstrap peer of this release", rc.who(), msgName(h.Type)))
		return
	}
	if int(h.Length) != size && (h.Length > maxRecord || r.wrongShape(rc.who(), int(h.Length), make([]byte, h.Length)) == nil) {
		failed(r.errf("%s sent a %d-byte INFO_TO_ROOT record, expected %d (%s)", rc.who(), h.Length, size, what))
		return
	}
	buf := make([]byte, h.Length)
	if n, err := io.ReadFull(rc.l.in(), buf); err != nil {
		if n >= 8 {
			rc.rank = int(int32(binary.LittleEndian.Uint32(buf[4:8])))
			rc.l.peer = rc.who()
		}
		failed(r.errf("%v", rc.l.readErr("reading its INFO_TO_ROOT record", err, n, size, "its INFO_TO_ROOT record")))
		return
	}
	if len(buf) != size {
		rc.rank = int(int32(binary.LittleEndian.Uint32(buf[4:8])))
		failed(r.wrongShape(rc.who(), len(buf), buf))
		return
	}
	r.unmarshalRecord(rc, buf)
	rc.rank = int(rc.rec.Info.Rank)
	rc.l.peer = fmt.Sprintf("rank %d (peer %s)", rc.rank, rc.remote)
	if !s.emit(rootEvent{kind: evRecord, rc: rc}) {
		return
	}
	for {
		typ, _, err := rc.l.recvAny("", 0, true)
		var ab *AbortError
		switch {
		case errors.As(err, &ab):
			// The text is the rank's word: passed on escaped, and put
			// down to the address it came from as well as the rank it
			// claims.
			failed(r.errf("%s reports: %s", rc.who(), cfmt.Escape(ab.Reason, cfmt.PeerTextMax)))
			return
		case err != nil:
			s.emit(rootEvent{kind: evFailed, rc: rc, hungUp: true, err: r.errf("%s closed its root connection before the world was complete (did its process die?)", rc.who())})
			return
		case typ == abi.BootstrapMsgRingDone:
			if !s.emit(rootEvent{kind: evDone, rc: rc}) {
				return
			}
		default:
			failed(r.errf("%s sent an unexpected %s", rc.who(), msgName(typ)))
			return
		}
	}
}

// admit validates one record against the world.
func (r *Root) admit(rc *rankConn, byRank []*rankConn) error {
	info := rc.rec.Info
	if info.Sanity != abi.BootstrapSanity {
		return r.errf("%s: bad sanity magic %#08x in INFO_TO_ROOT, expected %#08x (%q): not a bootstrap peer of this release",
			rc.who(), info.Sanity, abi.BootstrapSanity, sanityText())
	}
	if int(info.Nranks) != r.nranks {
		return r.errf("%s says nranks %d, this root serves a world of %d: start every rank with the same world size", rc.who(), info.Nranks, r.nranks)
	}
	if info.Rank < 0 || int(info.Rank) >= r.nranks {
		return r.errf("%s: rank %d is out of range 0..%d", rc.who(), info.Rank, r.nranks-1)
	}
	if lo, hi := r.span(); int(info.Rank) < lo || int(info.Rank) >= hi {
		o := RootOf(int(info.Rank), len(r.ring.roots), r.nranks, r.perInstance, r.global)
		olo, ohi := RootRange(o, len(r.ring.roots), r.nranks, r.perInstance, r.global)
		return r.errf("%s: rank %d belongs to root %d (ranks %d..%d), not this root %d (ranks %d..%d): give every rank the same %s",
			rc.who(), info.Rank, o, olo, ohi-1, r.ring.index, lo, hi-1, abi.EnvBootstrapRoots)
	}
	if prev := byRank[info.Rank]; prev != nil {
		return r.errf("%s: rank %d is already taken by peer %s: give every process its own rank", rc.who(), info.Rank, prev.remote)
	}
	if _, err := DecodeAddr(info.ExtAddressListen); err != nil {
		return r.errf("%s: its listen address: %v", rc.who(), err)
	}
	if err := r.admitHier(rc); err != nil {
		return err
	}
	byRank[info.Rank] = rc
	rc.admitted = true
	return nil
}

// checkGitHashes refuses a global world whose ranks carry different
// nccl_nrt_git_hash tags, naming the ranks that differ from the majority.
func (r *Root) checkGitHashes(byRank []*rankConn) error {
	count := map[abi.NcclNRTGitHash]int{}
	for _, rc := range byRank {
		count[rc.rec.NcclNRTGitHash]++
	}
	if len(count) == 1 {
		return nil
	}
	ref := byRank[0].rec.NcclNRTGitHash
	for _, rc := range byRank { // the most common tag; ties go to the lowest rank's
		if h := rc.rec.NcclNRTGitHash; count[h] > count[ref] {
			ref = h
		}
	}
	var odd []string
	for _, rc := range byRank {
		if h := rc.rec.NcclNRTGitHash; h != ref {
			odd = append(odd, fmt.Sprintf("%s carries nccl_nrt_git_hash %s", rc.who(), formatGitHash(h)))
		}
	}
	return r.errf("%s, the other %d ranks %s: the hosts run different libnccom or libnrt builds", strings.Join(odd, "; "), count[ref], formatGitHash(ref))
}

// heartbeat tells every rank heard from that the root is alive and waiting.
func (r *Root) heartbeat(byRank []*rankConn, have int) {
	var buf [abi.SizeofBootstrapRootWait]byte
	w := abi.BootstrapRootWait{Have: uint32(have), Nranks: uint32(r.nranks)}
	w.MarshalTo(buf[:])
	for _, rc := range byRank {
		if rc != nil {
			// A rank that cannot take it is gone; its reader reports that.
			_ = rc.l.send(abi.BootstrapMsgRootWait, buf[:])
		}
	}
}

// abort sends the failure to every connection, then lingers (at most the
// timeout) so that ranks still on their way hear it too, and returns it.
func (r *Root) abort(s *session, err error) error {
	closed := errors.Is(err, errClosed)
	if closed {
		err = r.errf("closed before the world was complete")
	}
	// The ranks learn the reason; who sent it is on their side of the link.
	text := strings.TrimPrefix(err.Error(), fmt.Sprintf("bootstrap root %s: ", r.addr))
	if len(text) > int(abi.BootstrapAbortTextMax) {
		text = text[:abi.BootstrapAbortTextMax]
	}
	for _, rc := range s.conns {
		tell(rc, text)
	}
	if closed {
		r.n.log.Info(err.Error())
		return err
	}
	r.n.log.Error(err.Error())
	r.linger(s, text)
	return err
}

// tell sends the ABORT and half-closes: the peer reads it, then EOF.
func tell(rc *rankConn, text string) {
	_ = rc.l.send(abi.BootstrapMsgAbort, []byte(text))
	if tc, ok := rc.l.c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// linger keeps the failed root up until every connection has hung up and
// every rank has connected (or nobody more can), telling newcomers why. The
// connection the failure came from, and any that never became a rank, are
// waited for only culpritGrace: a peer that drips bytes and never hangs up
// would otherwise add the whole timeout to the root's (deadlines are
// totals: docs/bootstrap.md#bounds-and-tests).
func (r *Root) linger(s *session, text string) {
	limit := time.NewTimer(r.n.cfg.Timeout)
	defer limit.Stop()
	grace := time.NewTimer(min(r.n.cfg.Timeout, culpritGrace))
	defer grace.Stop()
	graceOver := false
	for s.open(graceOver) || len(s.conns) < r.nranks && !s.acceptDone {
		select {
		case ev := <-s.events:
			s.note(ev)
			if ev.kind == evConn {
				tell(ev.rc, text)
			}
			if ev.kind == evRootRec {
				r.relay(s.next, ev.rec)
			}
		case <-grace.C:
			graceOver = true
		case <-limit.C:
			return
		case <-r.st.done:
			return
		}
	}
}

// culpritGrace is how long a failed root waits for the connection its
// failure came from to hang up, time for it to read the ABORT.
const culpritGrace = time.Second

// open reports whether a connection is still up, leaving out the culprit
// and those that are no rank once their grace is over.
func (s *session) open(graceOver bool) bool {
	for _, rc := range s.conns {
		if !rc.gone && !(graceOver && (rc == s.culprit || !rc.admitted)) {
			return true
		}
	}
	return false
}

// unrecorded names the connections still open without a record: when the
// root gives up on a missing rank, a peer that connected and is still
// sending (or saying nothing) is likely why.
func (s *session) unrecorded() string {
	var peers []string
	for _, rc := range s.conns {
		if !rc.gone && rc.rank < 0 {
			peers = append(peers, rc.remote)
		}
	}
	if len(peers) == 0 {
		return ""
	}
	const show = 8
	more := ""
	if len(peers) > show {
		more = fmt.Sprintf(" and %d more", len(peers)-show)
		peers = peers[:show]
	}
	return "; connected without a complete record: peer " + strings.Join(peers, ", peer ") + more
}

// missing lists the ranks without a record, or (when flags is given) those
// whose flag is unset.
func missing(byRank []*rankConn, flags []bool, span ...int) []int {
	var out []int
	lo, hi := 0, len(byRank)
	if len(span) == 2 {
		lo, hi = span[0], span[1]
	}
	for i := lo; i < hi; i++ {
		if rc := byRank[i]; flags == nil && rc == nil || flags != nil && !flags[i] {
			out = append(out, i)
		}
	}
	return out
}

func rankList(ranks []int) string {
	const show = 8
	parts := make([]string, 0, show+1)
	for i, r := range ranks {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(ranks)-show))
			break
		}
		parts = append(parts, fmt.Sprint(r))
	}
	if len(ranks) == 1 {
		return "rank " + parts[0]
	}
	return "ranks " + strings.Join(parts, ", ")
}

func sanityText() string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], abi.BootstrapSanity)
	return string(b[:])
}
