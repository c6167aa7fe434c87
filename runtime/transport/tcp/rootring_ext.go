package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// The roots' ring past the reply, extended framing
// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring): a root keeps
// both root links open while its ranks wire their rings, and sends on the
// one to the next root a bootstrap_root_done once all its ranks sent
// RING_DONE and a bootstrap_root_abort for every failure it sees; each
// root passes what the previous one sends on to the next unless the next
// is the record's origin, so every record reaches every root once. A root
// sends COMPLETE once it holds all R ranges' done; an abort from anywhere
// opens its 250 ms window (explain) as one of its own ranks' would.

// rootRecMax is the largest record: an abort with the longest text.
const rootRecMax = abi.SizeofBootstrapRootAbort + int(abi.BootstrapAbortTextMax)

// rootRec is one record another root sent, checked.
type rootRec struct {
	done   bool
	origin int
	rank   int    // abort: the origin's rank whose connection failed, -1 none
	kind   uint32 // abort: BOOTSTRAP_ROOT_ABORT_*
	text   string // abort: as the origin worded it, escaped here
	raw    []byte // the payload, passed on unchanged
}

// parseRootRec checks one frame's payload from the previous root (from
// names it) against the world: root self of R on n ranks with L = l. A
// record from self came back round: the relay before self passed it on
// past its origin.
func parseRootRec(b []byte, from string, self, nroots, n, l int, global bool) (rootRec, error) {
	rec := rootRec{raw: b, rank: -1}
	if len(b) < 4 || leUint32(b) != abi.BootstrapRootSanity {
		magic := uint32(0)
		if len(b) >= 4 {
			magic = leUint32(b)
		}
		return rec, fmt.Errorf("%s sent a %d-byte record with magic %#08x on the roots' ring, expected %#08x", from, len(b), magic, abi.BootstrapRootSanity)
	}
	origin := func(i uint32) error {
		switch {
		case int(i) >= nroots:
			return fmt.Errorf("%s relayed a record whose field index is %d, but the world has %d roots", from, i, nroots)
		case int(i) == self:
			return fmt.Errorf("%s relayed root %d's own record back to it: a relay passed it on past its origin (each record goes round once)", from, self)
		}
		return nil
	}
	switch {
	case len(b) == abi.SizeofBootstrapRootDone:
		var d abi.BootstrapRootDone
		d.UnmarshalFrom(b)
		if int(d.Nroots) != nroots {
			return rec, fmt.Errorf("%s relayed a done record whose field nroots is %d, this root's world has %d roots", from, d.Nroots, nroots)
		}
		if err := origin(d.Index); err != nil {
			return rec, err
		}
		lo, hi := RootRange(int(d.Index), nroots, n, l, global)
		if int(d.Count) != hi-lo {
			return rec, fmt.Errorf("%s relayed root %d's done record with field count %d, the rule gives root %d ranks %d..%d (%d)", from, d.Index, d.Count, d.Index, lo, hi-1, hi-lo)
		}
		rec.done, rec.origin = true, int(d.Index)
		return rec, nil
	case len(b) >= abi.SizeofBootstrapRootAbort:
		var a abi.BootstrapRootAbort
		a.UnmarshalFrom(b)
		if err := origin(a.Index); err != nil {
			return rec, err
		}
		if int(a.TextLen) != len(b)-abi.SizeofBootstrapRootAbort || a.TextLen > abi.BootstrapAbortTextMax {
			return rec, fmt.Errorf("%s relayed root %d's abort record with field text_len %d in a %d-byte record (text at most %d)", from, a.Index, a.TextLen, len(b), abi.BootstrapAbortTextMax)
		}
		if a.Kind != abi.BootstrapRootAbortHungUp && a.Kind != abi.BootstrapRootAbortReport {
			return rec, fmt.Errorf("%s relayed root %d's abort record with field kind %d, expected %d (hung up) or %d (report)", from, a.Index, a.Kind, abi.BootstrapRootAbortHungUp, abi.BootstrapRootAbortReport)
		}
		lo, hi := RootRange(int(a.Index), nroots, n, l, global)
		if a.Rank != -1 && (int(a.Rank) < lo || int(a.Rank) >= hi) {
			return rec, fmt.Errorf("%s relayed root %d's abort record with field rank %d, not one of root %d's ranks %d..%d", from, a.Index, a.Rank, a.Index, lo, hi-1)
		}
		if a.Kind == abi.BootstrapRootAbortHungUp && a.Rank == -1 {
			return rec, fmt.Errorf("%s relayed root %d's abort record of kind hung up with field rank -1: a hang-up names its rank", from, a.Index)
		}
		rec.origin, rec.rank, rec.kind = int(a.Index), int(a.Rank), a.Kind
		rec.text = cfmt.Escape(b[abi.SizeofBootstrapRootAbort:], int(abi.BootstrapAbortTextMax))
		return rec, nil
	}
	return rec, fmt.Errorf("%s sent a %d-byte record on the roots' ring: a done record is %d bytes, an abort %d plus its text", from, len(b), abi.SizeofBootstrapRootDone, abi.SizeofBootstrapRootAbort)
}

// RootRecord is what ParseRootRecord took from a record.
type RootRecord struct {
	Done         bool
	Origin, Rank int
	Kind         uint32
}

// ParseRootRecord is the Go roots' reading of one record of the extended
// roots' ring past the reply, at root self of nroots on a global world of
// n ranks with L = l: the rule the reference libnccom's reader is held to
// (runtime/e2e FuzzCRootRecord).
func ParseRootRecord(b []byte, self, nroots, n, l int) (RootRecord, error) {
	rec, err := parseRootRec(b, "previous root", self, nroots, n, l, true)
	return RootRecord{Done: rec.done, Origin: rec.origin, Rank: rec.rank, Kind: rec.kind}, err
}

func doneRecord(index, nroots, count int) []byte {
	d := abi.BootstrapRootDone{Sanity: abi.BootstrapRootSanity, Nroots: uint32(nroots), Index: uint32(index), Count: uint32(count)}
	b := make([]byte, abi.SizeofBootstrapRootDone)
	d.MarshalTo(b)
	return b
}

func abortRecord(index, rank int, kind uint32, text string) []byte {
	if len(text) > int(abi.BootstrapAbortTextMax) {
		text = text[:abi.BootstrapAbortTextMax]
	}
	a := abi.BootstrapRootAbort{Sanity: abi.BootstrapRootSanity, Index: uint32(index), Rank: int32(rank), Kind: kind, TextLen: uint32(len(text))}
	b := make([]byte, abi.SizeofBootstrapRootAbort, abi.SizeofBootstrapRootAbort+len(text))
	a.MarshalTo(b)
	return append(b, text...)
}

// readRootLink reads the roots' link l for as long as it lives, each
// record an evRootRec (forward: the previous root's link) or, once it
// fails or ends, an evRootLink. The size prefix has no deadline (the
// ranks may take the whole wiring); a record once begun has the timeout.
func (r *Root) readRootLink(l *link, forward bool, s *session) {
	ring := r.ring
	for {
		var hdr [frameSizeBytes]byte
		_ = l.c.SetReadDeadline(time.Time{})
		n, err := io.ReadFull(l.in(), hdr[:])
		if err != nil {
			err = l.readErr("waiting for a record of the roots' ring", err, n, len(hdr), "a record's size")
		}
		if err == nil && !forward {
			err = fmt.Errorf("%s sent a frame on the roots' link it only answers on (the first-rank record came already)", l.peer)
		}
		var size int
		if err == nil {
			if size, err = DecodeFrameSize(hdr[:], rootRecMax); err != nil {
				err = fmt.Errorf("%w (a record of the roots' ring from %s)", err, l.peer)
			}
		}
		var rec rootRec
		if err == nil {
			_ = l.c.SetReadDeadline(time.Now().Add(l.timeout))
			b := make([]byte, size)
			if n, e := io.ReadFull(l.in(), b); e != nil {
				err = l.readErr("reading a record of the roots' ring", e, n, size, "a roots' ring record")
			} else {
				rec, err = parseRootRec(b, l.peer, ring.index, len(ring.roots), r.nranks, r.perInstance, r.global)
			}
		}
		if err != nil {
			s.emit(rootEvent{kind: evRootLink, err: err, forward: forward})
			return
		}
		if !s.emit(rootEvent{kind: evRootRec, rec: rec}) {
			return
		}
	}
}

// relay passes rec on to the next root unless the next is its origin.
func (r *Root) relay(next *link, rec rootRec) {
	if next == nil || rec.origin == r.ring.next() {
		return
	}
	if err := next.sendFrame(rec.raw, "a roots' ring record"); err != nil {
		r.n.log.Warn("bootstrap root: a record of the roots' ring not passed on", "err", err)
	}
}

// takeRootConn reads the rest of the previous root's range frame (its
// size prefix and magic came as an extended header) and hands the
// connection to the root's loop.
func (r *Root) takeRootConn(rc *rankConn, s *session) {
	b := make([]byte, abi.SizeofBootstrapRootRange)
	binary.LittleEndian.PutUint32(b, abi.BootstrapRootSanity)
	var err error
	if n, e := io.ReadFull(rc.l.in(), b[4:]); e != nil {
		err = rc.l.readErr("reading a root's range record", e, n+4, len(b), "its range record")
	}
	s.emit(rootEvent{kind: evRootConn, rc: rc, buf: b, err: err})
}

// linkRoots runs the roots' ring's steps (3)-(5) once this root holds
// its ranks, then reads both roots' links for the rest of the world's
// wiring. It returns the table the replies are made from: byRank, with the
// next range's first rank where the last successor crosses this range's
// end. One root: byRank.
func (r *Root) linkRoots(s *session, byRank []*rankConn) ([]*rankConn, error) {
	if r.ring == nil {
		return byRank, nil
	}
	lo, hi := r.span()
	err := <-s.nextc
	s.gotNext = true
	if err != nil {
		return nil, r.errf("root ring: %v", err)
	}
	first, err := r.ringOfRoots(s.prev, s.next, byRank[lo].rec.Info.ExtAddressListen)
	if err != nil {
		if err := r.stopped(); err != nil {
			return nil, err
		}
		return nil, r.errf("root ring (%s): %v", r.rootName(r.ring.index), err)
	}
	table := slices.Clone(byRank)
	table[hi%r.nranks] = &rankConn{rank: hi % r.nranks, rec: abi.ExtInfoGlobal{Info: abi.ExtInfo{ExtAddressListen: first}}}
	s.linked = true
	for _, f := range []bool{true, false} {
		l := s.prev
		if !f {
			l = s.next
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			r.readRootLink(l, f, s)
		}()
	}
	return table, nil
}

// rootLinkFailed is the verdict on a roots' link that failed or ended:
// the next root's hang-up is its own end (done, or failing: its abort
// comes round on the previous root's link); anything else fails the
// world, naming that root and the phase.
func (r *Root) rootLinkFailed(ev rootEvent) error {
	var hu *hangUp
	if !ev.forward && errors.As(ev.err, &hu) {
		return nil
	}
	return r.errf("root ring: %v", ev.err)
}

// publish tells the next root of a failure this root saw (rank -1: none
// of its ranks), once the roots' links carry records.
func (r *Root) publish(s *session, rank int, kind uint32, text string) {
	if !s.linked {
		return
	}
	s.published = true
	if err := s.next.sendFrame(abortRecord(r.ring.index, rank, kind, text), "an abort record"); err != nil {
		r.n.log.Warn("bootstrap root: an abort record not sent to the next root", "err", err)
	}
}

// rootText is err without this root's prefix: what its ranks read.
func (r *Root) rootText(err error) string {
	return strings.TrimPrefix(err.Error(), fmt.Sprintf("bootstrap root %s: ", r.addr))
}

// hangUpRoots closes the roots' links at the root's end: a dial still
// on its way is let finish first (at most culpritGrace), so the next root
// reads the end at once instead of waiting for a connection
// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring).
func (r *Root) hangUpRoots(s *session) {
	if !s.gotNext {
		select {
		case <-s.nextc:
		case <-time.After(min(r.n.cfg.Timeout, culpritGrace)):
			r.st.abort(errClosed)
			<-s.nextc
		}
	}
	s.prev.close()
	s.next.close()
}

// rootList names the roots whose done has not come ("roots 1, 2").
func rootList(doneFrom []bool, self int) string {
	var out []string
	for i, d := range doneFrom {
		if !d && i != self {
			out = append(out, fmt.Sprint(i))
		}
	}
	if len(out) == 1 {
		return "root " + out[0]
	}
	return "roots " + strings.Join(out, ", ")
}
