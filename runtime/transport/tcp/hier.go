package tcp

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The hierarchical (2-tier) bootstrap, docs/bootstrap-hierarchy.md: ranks
// grouped into instances of L (vncPerInstance), an intra-instance ring, the
// local leaders' inter-instance ring and one frame back down the intra ring.
// Everything else — the root's checks, the framings, ABORT, the naming of a
// failed peer — is the flat path's.

// PerInstanceMax bounds L (BOOTSTRAP_PER_INSTANCE_MAX): a larger L could
// only mean flat, so it is a typo.
const PerInstanceMax = int(abi.BootstrapPerInstanceMax)

// CheckPerInstance refuses an L outside 1..PerInstanceMax, naming where it
// came from.
func CheckPerInstance(what string, l int) error {
	if l < 1 || l > PerInstanceMax {
		return fmt.Errorf("%s = %d: ranks per instance must be a whole number in 1..%d (docs/bootstrap-hierarchy.md)", what, l, PerInstanceMax)
	}
	return nil
}

// ParsePerInstance reads L as NRTABI_BOOTSTRAP_PER_INSTANCE spells it; ""
// is 0, unset (flat).
func ParsePerInstance(what, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	l, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: ranks per instance must be a whole number in 1..%d (docs/bootstrap-hierarchy.md)", what, s, PerInstanceMax)
	}
	return l, CheckPerInstance(what, l)
}

// Hierarchical is the dispatch both roles and both implementations share
// (contradiction bootstrap-dispatch: the root's condition): a global init
// of more ranks than one instance holds. l = 0 (unset) is flat.
func Hierarchical(global bool, nranks, l int) bool {
	return global && l > 0 && nranks > l
}

// shape is one rank's place in a hierarchical world.
type shape struct {
	n, l, rank int
	h, hn      int // instance, instances (H)
	local, lh  int // local rank, ranks of this instance (L_h)
}

func newShape(rank, n, l int) *shape {
	s := &shape{n: n, l: l, rank: rank, h: rank / l, hn: (n + l - 1) / l, local: rank % l}
	s.lh = s.size(s.h)
	return s
}

// size is L_h, the ranks of instance h: the last may be short.
func (s *shape) size(h int) int   { return min(s.l, s.n-h*s.l) }
func (s *shape) leader(h int) int { return h * s.l }
func (s *shape) isLeader() bool   { return s.local == 0 }
func (s *shape) intraNext() int   { return s.leader(s.h) + (s.local+1)%s.lh }
func (s *shape) intraPrev() int   { return s.leader(s.h) + (s.local-1+s.lh)%s.lh }
func (s *shape) interNext() int   { return s.leader((s.h + 1) % s.hn) }
func (s *shape) interPrev() int   { return s.leader((s.h - 1 + s.hn) % s.hn) }

// Hier reports whether this endpoint's world is hierarchical, and its L.
func (e *Endpoint) Hier() (bool, int) {
	if e.hier == nil {
		return false, 0
	}
	return true, e.hier.l
}

// replySize is the INFO_FROM_ROOT payload this rank expects.
func (e *Endpoint) replySize() int {
	if e.hier != nil {
		return abi.SizeofBootstrapRootReplyHier
	}
	return abi.SizeofBootstrapRootReply
}

// takeReply reads the root's reply: cluster id, epoch and the successor(s).
// A hierarchical reply must agree with this rank's own arithmetic, so a
// root of another shape is caught at its first message, not as a hang.
func (e *Endpoint) takeReply(p []byte) (next, inter netip.AddrPort, err error) {
	if e.hier == nil {
		var reply abi.BootstrapRootReply
		reply.UnmarshalFrom(p)
		e.cluster, e.epoch = reply.ClusterID, reply.Epoch
		next, err = DecodeAddr(reply.Neighbour)
		if err != nil {
			err = fmt.Errorf("the root's INFO_FROM_ROOT names no usable successor: %w", err)
		}
		return next, inter, err
	}
	s := e.hier
	var reply abi.BootstrapRootReplyHier
	reply.UnmarshalFrom(p)
	e.cluster, e.epoch = reply.ClusterID, reply.Epoch
	if int(reply.Instance) != s.h || int(reply.Ninstances) != s.hn || int(reply.LocalRank) != s.local || int(reply.LocalN) != s.lh {
		return next, inter, fmt.Errorf("the root's INFO_FROM_ROOT places this rank at instance %d of %d, local rank %d of %d; with per_instance %d it is instance %d of %d, local rank %d of %d: the root and this rank disagree on the world's shape",
			reply.Instance, reply.Ninstances, reply.LocalRank, reply.LocalN, s.l, s.h, s.hn, s.local, s.lh)
	}
	if next, err = DecodeAddr(reply.IntraNext); err != nil {
		return next, inter, fmt.Errorf("the root's INFO_FROM_ROOT names no usable intra-instance successor: %w", err)
	}
	if !s.isLeader() {
		if reply.InterNext != (abi.NcclSocketAddress{}) {
			return next, inter, fmt.Errorf("the root's INFO_FROM_ROOT gives this rank, local rank %d and no leader, an inter-instance successor", s.local)
		}
		return next, inter, nil
	}
	if inter, err = DecodeAddr(reply.InterNext); err != nil {
		return next, inter, fmt.Errorf("the root's INFO_FROM_ROOT names no usable inter-instance successor for this leader of instance %d: %w", s.h, err)
	}
	return next, inter, nil
}

// ringRole names the ends of the two rings in errors.
func ringRole(inter, succ bool, rank int) string {
	dir := "predecessor"
	if succ {
		dir = "successor"
	}
	if inter {
		return fmt.Sprintf("inter ring %s (leader) rank %d", dir, rank)
	}
	return fmt.Sprintf("intra ring %s rank %d", dir, rank)
}

// wireHier connects to the intra successor (and, on a leader, to the next
// leader), each connection opening with its sender's name, then accepts
// its predecessors in whatever order they come.
func (e *Endpoint) wireHier(next, inter netip.AddrPort) error {
	s, t := e.hier, e.n.cfg.Timeout
	open := func(to netip.AddrPort, isInter bool, rank int) (*link, error) {
		l, err := dial(to.String(), fmt.Sprintf("%s (%s)", ringRole(isInter, true, rank), to), t, e.st)
		if err != nil {
			return nil, err
		}
		e.st.add(l.c)
		ch := abi.BootstrapChannelRing
		if isInter {
			ch = abi.BootstrapChannelInterRing
		}
		if e.n.cfg.Extended {
			err = e.sendHello(l, ch)
		} else {
			err = l.sendFrame(putInt(e.rank), "its rank")
		}
		return l, err
	}
	want := 0
	if s.lh > 1 {
		l, err := open(next, false, s.intraNext())
		e.ringSend = l
		if err != nil {
			return err
		}
		want++
	}
	if s.isLeader() {
		l, err := open(inter, true, s.interNext())
		e.interSend = l
		if err != nil {
			return err
		}
		want++
	}
	deadline := time.Now().Add(t)
	for ; want > 0; want-- {
		if err := e.acceptHier(deadline); err != nil {
			return err
		}
	}
	return nil
}

// acceptHier accepts one ring predecessor and files it by the rank it names.
func (e *Endpoint) acceptHier(deadline time.Time) error {
	s, t := e.hier, e.n.cfg.Timeout
	var expect []string
	if s.lh > 1 && e.ringRecv == nil {
		expect = append(expect, ringRole(false, false, s.intraPrev()))
	}
	if s.isLeader() && e.interRecv == nil {
		expect = append(expect, ringRole(true, false, s.interPrev()))
	}
	_ = e.ln.SetDeadline(deadline)
	c, err := e.ln.Accept()
	if err != nil {
		if cause := e.st.cause(); cause != nil {
			return cause
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("%s did not connect within %s (%s)", joinOr(expect), t, abi.EnvSockTimeout)
		}
		return fmt.Errorf("accepting %s: %w", joinOr(expect), err)
	}
	_ = e.ln.SetDeadline(time.Time{})
	e.st.add(c)
	l := &link{c: c, peer: "peer " + c.RemoteAddr().String(), timeout: t, st: e.st}
	rank, isInter := -1, false
	if e.n.cfg.Extended {
		h, err := e.readHello(l)
		if err != nil {
			l.close()
			return err
		}
		rank = int(h.Rank)
		switch h.Channel {
		case abi.BootstrapChannelRing:
		case abi.BootstrapChannelInterRing:
			isInter = true
		default:
			l.close()
			return fmt.Errorf("%s (rank %d) opened channel %d where %s was due", l.peer, rank, h.Channel, joinOr(expect))
		}
	} else {
		var rb [4]byte
		if err := l.recvExact(rb[:], "its rank"); err != nil {
			l.close()
			return err
		}
		rank = int(int32(leUint32(rb[:])))
		// The default framing names no ring: the rank does, since the two
		// predecessors are in different instances.
		isInter = rank >= 0 && rank/s.l != s.h
	}
	switch {
	case !isInter && s.lh > 1 && e.ringRecv == nil && rank == s.intraPrev():
		l.peer = claimed(rank, c)
		e.ringRecv = l
	case isInter && s.isLeader() && e.interRecv == nil && rank == s.interPrev():
		l.peer = claimed(rank, c)
		e.interRecv = l
	default:
		l.close()
		return fmt.Errorf("a connection from %s naming rank %d arrived where %s was due (per_instance %d: is that rank's per_instance the same?)", c.RemoteAddr(), rank, joinOr(expect), s.l)
	}
	return nil
}

func joinOr(s []string) string {
	switch len(s) {
	case 0:
		return "no ring predecessor"
	case 1:
		return s[0]
	}
	return s[0] + " or " + s[1]
}

// hierAllGather is the 3-phase all-gather of docs/bootstrap-hierarchy.md
// over B-byte records (len(data) = N*B): the intra ring, the leaders' ring
// of instance blocks, one frame of the other instances back down.
func (e *Endpoint) hierAllGather(data []byte) error {
	s := e.hier
	b := len(data) / s.n
	base := s.leader(s.h) * b
	end := base + s.lh*b
	phase := func(p string) {
		if h := e.n.cfg.Hooks.GatherPhase; h != nil {
			h(p)
		}
	}
	phase("intra")
	if s.lh > 1 {
		if err := e.ringSteps(e.ringSend, e.ringRecv, data[base:end], evenBounds(s.lh, b), s.local, s.leader(s.h), abi.BootstrapPhaseIntraRing); err != nil {
			return err
		}
	}
	phase("inter")
	if s.isLeader() {
		bounds := make([]int, s.hn+1)
		for h := range s.hn {
			bounds[h+1] = bounds[h] + s.size(h)*b
		}
		if err := e.ringSteps(e.interSend, e.interRecv, data, bounds, s.h, 0, abi.BootstrapPhaseInterRing); err != nil {
			return err
		}
	}
	phase("down")
	if s.lh == 1 {
		return nil
	}
	rest := make([]byte, len(data)-(end-base))
	if s.isLeader() {
		copy(rest, data[:base])
		copy(rest[base:], data[end:])
	}
	if s.isLeader() {
		ops := []ringOp{{l: e.ringSend, send: true, buf: e.relayOut(rest)}}
		if e.n.cfg.Bidirectional && s.lh > 2 {
			ops = append(ops, ringOp{l: e.ringRecv, send: true, buf: e.relayOut(rest)})
		}
		return e.exchangeDown(ops)
	}
	from, out, pass := e.downRoute()
	if err := e.exchangeDown([]ringOp{{l: from, buf: rest}}); err != nil {
		return err
	}
	// rest is the ranks before this instance, then those after it; it is
	// checked before it is passed on (docs/bootstrap-hierarchy.md#forged-relays).
	if err := e.verifyRelayed(from, 0, rest[:base]); err != nil {
		return e.ringFailed(from, abi.BootstrapPhaseDown, 0, err)
	}
	if err := e.verifyRelayed(from, s.leader(s.h)+s.lh, rest[base:]); err != nil {
		return e.ringFailed(from, abi.BootstrapPhaseDown, 0, err)
	}
	if pass {
		if err := e.exchangeDown([]ringOp{{l: out, send: true, buf: e.relayOut(rest)}}); err != nil {
			return err
		}
	}
	copy(data[:base], rest)
	copy(data[end:], rest[base:])
	return nil
}

// evenBounds are the offsets of n blocks of b bytes.
func evenBounds(n, b int) []int {
	o := make([]int, n+1)
	for i := range n {
		o[i+1] = o[i] + b
	}
	return o
}

// gather is the all-gather of the world's shape: flat or hierarchical.
func (e *Endpoint) gather(data []byte) error {
	if e.hier != nil {
		return e.hierAllGather(data)
	}
	return e.ringSteps(e.ringSend, e.ringRecv, data, evenBounds(e.size, len(data)/e.size), e.rank, 0, abi.BootstrapPhaseFlatRing)
}

// recordSize is the INFO_TO_ROOT payload this root takes and what it is.
func (r *Root) recordSize() (int, string) {
	switch {
	case r.hier:
		return abi.SizeofExtInfoHier, fmt.Sprintf("extInfoHier 64 B, a hierarchical world of per_instance %d", r.perInstance)
	case r.global:
		return abi.SizeofExtInfoGlobal, "extInfo 40 B + nccl_nrt_git_hash 16 B, a global init"
	}
	return abi.SizeofExtInfo, "extInfo 40 B"
}

// maxRecord is the largest INFO_TO_ROOT payload any rank sends: a root reads
// that much so that a rank of the other shape is named, not just truncated.
const maxRecord = abi.SizeofExtInfoHier

// wrongShape names a record of a size this root does not take but some
// rank would send: a rank that disagrees with the root on the dispatch
// (its L, or whether the init is global). nil for any other size.
func (r *Root) wrongShape(who string, n int, rec []byte) error {
	rootSide := "this root is flat (" + r.flatWhy() + ")"
	if r.hier {
		rootSide = fmt.Sprintf("this root is hierarchical (per_instance %d, nranks %d)", r.perInstance, r.nranks)
	}
	fix := "set " + abi.EnvBootstrapPerInstance + " (or --per-instance) alike on every rank and the root"
	switch {
	case n == abi.SizeofExtInfoHier && !r.hier:
		var x abi.ExtInfoHier
		x.UnmarshalFrom(rec)
		return r.errf("%s sent a hierarchical INFO_TO_ROOT (extInfoHier, per_instance %d), %s: %s", who, x.PerInstance, rootSide, fix)
	case (n == abi.SizeofExtInfoGlobal || n == abi.SizeofExtInfo) && r.hier:
		return r.errf("%s sent a flat %d-byte INFO_TO_ROOT (its per_instance unset or at least nranks), %s: %s", who, n, rootSide, fix)
	}
	return nil
}

func (r *Root) flatWhy() string {
	switch {
	case !r.global:
		return "not a global init"
	case r.perInstance == 0:
		return "per_instance unset"
	}
	return fmt.Sprintf("per_instance %d, nranks %d", r.perInstance, r.nranks)
}

// unmarshalRecord fills rc from a record of this root's size.
func (r *Root) unmarshalRecord(rc *rankConn, buf []byte) {
	switch {
	case r.hier:
		var x abi.ExtInfoHier
		x.UnmarshalFrom(buf)
		rc.rec, rc.per, rc.inst = x.Info, x.PerInstance, x.Instance
	case r.global:
		rc.rec.UnmarshalFrom(buf)
	default:
		rc.rec.Info.UnmarshalFrom(buf)
	}
}

// admitHier refuses a rank of a hierarchical world that disagrees on L or
// claims the wrong instance, naming it and both values.
func (r *Root) admitHier(rc *rankConn) error {
	if !r.hier {
		return nil
	}
	fix := "set " + abi.EnvBootstrapPerInstance + " (or --per-instance) alike on every rank and the root"
	if int(rc.per) != r.perInstance {
		return r.errf("%s reports per_instance %d, the root %d: %s", rc.who(), rc.per, r.perInstance, fix)
	}
	if want := rc.rank / r.perInstance; int(rc.inst) != want {
		return r.errf("%s claims instance %d, but rank %d with per_instance %d is in instance %d: a rank in the wrong instance", rc.who(), rc.inst, rc.rank, r.perInstance, want)
	}
	return nil
}

// reply is INFO_FROM_ROOT for rank: the flat ring successor, or the
// hierarchical reply (docs/bootstrap-hierarchy.md).
func (r *Root) reply(byRank []*rankConn, rank int) []byte {
	if !r.hier {
		b := make([]byte, abi.SizeofBootstrapRootReply)
		reply := abi.BootstrapRootReply{ClusterID: r.cluster, Epoch: r.epoch, Neighbour: byRank[(rank+1)%r.nranks].rec.Info.ExtAddressListen}
		reply.MarshalTo(b)
		return b
	}
	s := newShape(rank, r.nranks, r.perInstance)
	reply := abi.BootstrapRootReplyHier{
		ClusterID: r.cluster, Epoch: r.epoch,
		IntraNext: byRank[s.intraNext()].rec.Info.ExtAddressListen,
		Instance:  uint32(s.h), Ninstances: uint32(s.hn), LocalRank: uint32(s.local), LocalN: uint32(s.lh),
	}
	if s.isLeader() {
		reply.InterNext = byRank[s.interNext()].rec.Info.ExtAddressListen
	}
	b := make([]byte, abi.SizeofBootstrapRootReplyHier)
	reply.MarshalTo(b)
	return b
}

// tellRings passes a failed handshake's reason down the ring links this
// rank sends on, as an ABORT (extended framing: ABORT may travel on any
// bootstrap socket), before they close: a successor blocked reading the
// ring — a C rank among them — then reports the fault itself instead of
// only "its predecessor hung up". One try each, briefly: the sockets are
// about to close anyway.
func (e *Endpoint) tellRings(err error) {
	if !e.n.cfg.Extended {
		e.floodAbort(err)
		return
	}
	if errors.Is(err, errPlantedDeath) {
		return // a dead rank says nothing
	}
	frame := abortMsg(err.Error())
	// Both ways: a bidirectional ring reads its send links too.
	for _, l := range []*link{e.ringSend, e.interSend, e.ringRecv, e.interRecv} {
		if l == nil || l.c == nil {
			continue
		}
		// The abort already put every deadline in the past; this write
		// gets its own.
		_ = l.c.SetWriteDeadline(time.Now().Add(min(e.n.cfg.Timeout, 100*time.Millisecond)))
		_, _ = l.c.Write(frame)
	}
}

// explain is the root's verdict on a failed rank. The first failure to
// reach the root is often not the cause: when a process dies its ring
// neighbours give up too, some reporting what they saw ("rank 5 closed the
// connection"), some (a C rank of the extended framing) just hanging up,
// and which reaches the root first is a race. So the root waits hangUpGrace
// for the rest and names every rank that hung up in that time, then the
// first reason a rank reported; a failure with nothing after it is told as
// it is.
func (r *Root) explain(s *session, first rootEvent) error {
	var gone []string
	var report error
	// On a multi-root world the window is the world's: this root tells the
	// next root of each failure among its ranks, and takes the others'
	// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring).
	take := func(ev rootEvent) {
		switch {
		case ev.kind == evRootRec:
			r.relay(s.next, ev.rec)
			s.heard = s.heard || !ev.rec.done
			switch {
			case ev.rec.done:
			case ev.rec.kind == abi.BootstrapRootAbortHungUp:
				gone = append(gone, ev.rec.text)
			case report == nil:
				report = fmt.Errorf("root %d reports: %s", ev.rec.origin, ev.rec.text)
			}
		case ev.kind == evRootLink:
			if err := r.rootLinkFailed(ev); err != nil && report == nil {
				report = err
			}
		case ev.hungUp:
			gone = append(gone, ev.rc.goneName())
			r.publish(s, ev.rc.rank, abi.BootstrapRootAbortHungUp, ev.rc.goneName())
		default:
			if report == nil {
				report = ev.err
			}
			if ev.rc != nil && ev.rc.admitted {
				r.publish(s, ev.rc.rank, abi.BootstrapRootAbortReport, r.rootText(ev.err))
			} else {
				r.publish(s, -1, abi.BootstrapRootAbortReport, r.rootText(ev.err))
			}
		}
	}
	take(first)
	more := false
	grace := time.NewTimer(min(r.n.cfg.Timeout, hangUpGrace))
	defer grace.Stop()
wait:
	for {
		select {
		case ev := <-s.events:
			s.note(ev)
			switch ev.kind {
			case evFailed, evRootLink:
				take(ev)
				more = true
			case evRootRec:
				take(ev)
				more = more || !ev.rec.done
			}
		case <-grace.C:
			break wait
		case <-r.st.done:
			return r.st.cause()
		}
	}
	if !more && first.kind == evFailed {
		if first.hungUp {
			return r.errf("%s closed its root connection before the world was complete (did its process die?)", first.rc.goneName())
		}
		return first.err
	}
	var parts []string
	switch len(gone) {
	case 0:
	case 1:
		parts = append(parts, gone[0]+" closed its root connection before the world was complete (did its process die?)")
	default:
		parts = append(parts, strings.Join(gone, ", ")+" closed their root connections before the world was complete (did their processes die?)")
	}
	if report != nil {
		parts = append(parts, strings.TrimPrefix(report.Error(), fmt.Sprintf("bootstrap root %s: ", r.addr)))
	}
	return r.errf("%s", strings.Join(parts, "; "))
}

// abortMsg is an extended ABORT message carrying text, cut to the wire's
// bound (abi.BootstrapAbortTextMax), as one write.
func abortMsg(text string) []byte {
	if len(text) > int(abi.BootstrapAbortTextMax) {
		text = text[:abi.BootstrapAbortTextMax]
	}
	h := abi.BootstrapMsgHeader{Type: abi.BootstrapMsgAbort, Length: uint32(len(text))}
	frame := make([]byte, int(abi.BootstrapMsgHeaderSize)+len(text))
	h.MarshalTo(frame)
	copy(frame[abi.BootstrapMsgHeaderSize:], text)
	return frame
}
