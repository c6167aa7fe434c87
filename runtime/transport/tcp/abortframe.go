package tcp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// Abort frames (docs/bootstrap-hierarchy.md#abort-frames): a rank that sees
// a ring neighbour go, or fails a ring step otherwise, tells every ring link
// it has at once, and each rank that hears it passes it on, so the whole
// world fails within a few hops of the fault instead of one socket timeout
// per rank, each naming the dead rank, its address and the phase.

// abortWriteWithin bounds each write of an abort frame: the sockets are
// about to close anyway.
const abortWriteWithin = 100 * time.Millisecond

var phaseNames = map[uint32]string{
	abi.BootstrapPhaseWiring:    "ring wiring",
	abi.BootstrapPhaseFlatRing:  "flat ring all-gather",
	abi.BootstrapPhaseIntraRing: "intra ring all-gather",
	abi.BootstrapPhaseInterRing: "inter ring all-gather (leaders)",
	abi.BootstrapPhaseDown:      "down phase (one frame down the instance)",
	abi.BootstrapPhaseRoot:      "root exchange",
	abi.BootstrapPhasePeer:      "point-to-point send / receive after the gather",
}

// PhaseName is the spec's phase value as errors name it.
func PhaseName(p uint32) string {
	if n, ok := phaseNames[p]; ok {
		return n
	}
	return fmt.Sprintf("unknown phase %d", p)
}

// ringFault is a ring step that failed on this rank: the link's party is
// the one named dead (it went, did not answer, or relayed a forgery).
type ringFault struct {
	phase uint32
	step  int
	dead  int
	addr  netip.AddrPort
	from  *link
	self  bool // this rank's own failure (a wait that ran out): no rank is named dead
	err   error
}

func (f *ringFault) Error() string {
	if f.self {
		return fmt.Sprintf("%v (in the %s, step %d: this rank's own failure, which names no rank dead)", f.err, PhaseName(f.phase), f.step)
	}
	return fmt.Sprintf("%s, step %d: %s failed: %v", PhaseName(f.phase), f.step, deadName(f.dead, f.addr), f.err)
}

// deadName is a rank and its address as errors name the party at fault.
func deadName(rank int, addr netip.AddrPort) string {
	who := "an unknown rank"
	if rank >= 0 {
		who = fmt.Sprintf("rank %d", rank)
	}
	if addr.IsValid() {
		who += " (" + addr.String() + ")"
	}
	return who
}

func (f *ringFault) Unwrap() error { return f.err }

// RingAbortError is an abort frame another rank sent: the fault is the
// reporter's, as it saw it.
type RingAbortError struct {
	Info abi.BootstrapAbortInfo
	Text string // the reporter's error, as sent; Error shows it escaped
	From string // the link it came in on
	raw  []byte // the frame, to pass on unchanged
	via  *link
}

func (e *RingAbortError) Error() string {
	return fmt.Sprintf("aborted by rank %d (abort frame from %s): %s went in the %s, step %d: %s",
		e.Info.Reporter, e.From, e.Dead(), PhaseName(e.Info.Phase), e.Info.Step, cfmt.Escape(e.Text, cfmt.PeerTextMax))
}

// Dead names the rank the frame says went, with its address.
func (e *RingAbortError) Dead() string {
	ap, _ := DecodeAddr(e.Info.DeadAddr)
	return deadName(int(e.Info.DeadRank), ap)
}

// ReadAbortFrame reads the body of an abort frame — bootstrap_abort_info
// and its text — after a size prefix of BOOTSTRAP_FRAME_ABORT, refusing a
// bad magic or an over-long text by name.
func ReadAbortFrame(r io.Reader, peer string) (*RingAbortError, error) {
	var b [abi.SizeofBootstrapAbortInfo]byte
	if n, err := io.ReadFull(r, b[:]); err != nil {
		return nil, fmt.Errorf("%s sent an abort frame cut short after %d of %d bytes: %w", peer, n, len(b), err)
	}
	var info abi.BootstrapAbortInfo
	info.UnmarshalFrom(b[:])
	if info.Sanity != abi.BootstrapSanity {
		return nil, fmt.Errorf("%s sent an abort frame with magic %#08x, expected %#08x: not a bootstrap peer of this release", peer, info.Sanity, abi.BootstrapSanity)
	}
	if info.TextLen > abi.BootstrapAbortTextMax {
		return nil, fmt.Errorf("%s sent an abort frame of %d bytes of text (at most %d): not a bootstrap peer of this release", peer, info.TextLen, abi.BootstrapAbortTextMax)
	}
	text := make([]byte, info.TextLen)
	if n, err := io.ReadFull(r, text); err != nil {
		return nil, fmt.Errorf("%s sent an abort frame whose text was cut short after %d of %d bytes: %w", peer, n, len(text), err)
	}
	raw := append(append(putInt(abi.BootstrapFrameAbort), b[:]...), text...)
	return &RingAbortError{Info: info, Text: string(text), From: peer, raw: raw}, nil
}

// abortFrame is the frame a rank sends for its own fault.
func abortFrame(reporter int, f *ringFault, text string) []byte {
	if len(text) > int(abi.BootstrapAbortTextMax) {
		text = text[:abi.BootstrapAbortTextMax]
	}
	info := abi.BootstrapAbortInfo{Sanity: abi.BootstrapSanity, DeadRank: int32(f.dead), Reporter: int32(reporter),
		Phase: f.phase, Step: int32(f.step), TextLen: uint32(len(text))}
	if f.addr.IsValid() {
		info.DeadAddr = EncodeAddr(f.addr)
	}
	b := make([]byte, abi.SizeofBootstrapAbortInfo)
	info.MarshalTo(b)
	return append(append(putInt(abi.BootstrapFrameAbort), b...), text...)
}

// ringFailed names a failed ring step: the rank at the other end of l, its
// address (its listen address once known, else where the connection came
// from), the phase and the step. An abort that came from elsewhere, or the
// endpoint's own abort, is passed up as it is.
func (e *Endpoint) ringFailed(l *link, phase uint32, step int, err error) error {
	var ra *RingAbortError
	var ab *AbortError
	if errors.As(err, &ra) {
		ra.via = l
		return err
	}
	if errors.As(err, &ab) || e.st.cause() != nil || l == nil {
		return err
	}
	var hu *hangUp
	if !e.n.cfg.Extended && errors.As(err, &hu) {
		if ra := salvageAbort(l); ra != nil {
			return ra
		}
	}
	f := &ringFault{phase: phase, step: step, dead: e.linkRank(l), from: l, err: err}
	if f.dead >= 0 && e.peers[f.dead].IsValid() {
		f.addr = e.peers[f.dead]
	} else if l.c != nil {
		if ap, perr := netip.ParseAddrPort(l.c.RemoteAddr().String()); perr == nil {
			f.addr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
	}
	return f
}

// linkRank is the rank at the other end of one of this rank's ring links,
// -1 for any other link.
func (e *Endpoint) linkRank(l *link) int {
	switch {
	case l == nil:
	case l == e.ringSend:
		return e.Next()
	case l == e.ringRecv:
		return e.Prev()
	case e.hier != nil && l == e.interSend:
		return e.hier.interNext()
	case e.hier != nil && l == e.interRecv:
		return e.hier.interPrev()
	}
	return -1
}

// floodAbort tells every ring link of this rank, but the one a received
// abort came in on, of the fault err — once per endpoint; in the default
// framing only, since the extended framing has its ABORT message and its
// root for the ring, but in both framings the point-to-point links hear it
// (tellPeers). The writes run at once, each within abortWriteWithin.
func (e *Endpoint) floodAbort(err error, also ...*link) {
	if e.n.cfg.Extended {
		e.tellPeersExtended(err, also)
		return
	}
	var frame []byte
	var skip *link
	var ra *RingAbortError
	var f *ringFault
	switch {
	case errors.Is(err, errPlantedDeath):
		return // a dead rank says nothing
	case errors.As(err, &ra):
		frame, skip = ra.raw, ra.via
	case errors.As(err, &f):
		frame = abortFrame(e.rank, f, e.errf("%v", err).Error())
	default:
		return
	}
	e.abortOnce.Do(func() { e.tellAll(frame, skip, frame, also) })
}

// tellAll writes ring on this rank's ring links but skip, and peer on its
// point-to-point links (tellPeers), at once; then ends the ring links
// (drainRings). Once per endpoint: the caller holds abortOnce.
func (e *Endpoint) tellAll(ring []byte, skip *link, peer []byte, also []*link) {
	told := make(chan struct{})
	go func() {
		defer close(told)
		e.tellPeers(peer, skip, also)
	}()
	defer func() { <-told }()
	e.writeRings(ring, skip)
}

// writeRings writes frame on every ring link but skip, each write under
// its own short deadline, then ends them (drainRings).
func (e *Endpoint) writeRings(frame []byte, skip *link) {
	var wg sync.WaitGroup
	for _, l := range []*link{e.ringSend, e.ringRecv, e.interSend, e.interRecv} {
		if l == nil || l.c == nil || l == skip {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The abort put every deadline in the past; this write gets its own.
			_ = l.c.SetWriteDeadline(time.Now().Add(abortWriteWithin))
			_, _ = l.c.Write(frame)
		}()
	}
	wg.Wait()
	e.drainRings()
}

// drainWithin bounds how long an aborting rank reads its ring links before
// it closes them.
const drainWithin = 300 * time.Millisecond

// drainRings ends each ring link with a FIN after the abort frame and
// reads what the neighbour still sends until it hangs up too (or
// drainWithin passes). Closing at once would reset the connection under a
// neighbour still writing: it would see the reset before the abort frame
// and name this rank, which only passed the abort on, as the dead one.
func (e *Endpoint) drainRings() {
	var wg sync.WaitGroup
	for _, l := range []*link{e.ringSend, e.ringRecv, e.interSend, e.interRecv} {
		if l == nil || l.c == nil {
			continue
		}
		tc, ok := l.c.(*net.TCPConn)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = tc.CloseWrite()
			_ = tc.SetReadDeadline(time.Now().Add(drainWithin))
			_, _ = io.Copy(io.Discard, tc)
		}()
	}
	wg.Wait()
}

// salvageWithin bounds the look for an abort frame behind a failed send.
const salvageWithin = 100 * time.Millisecond

// salvageAbort looks, after a send on l failed because the connection is
// gone, for an abort frame the neighbour sent before it hung up: a rank
// that passes an abort on and closes can reset a connection under a send
// of ours before we read its frame, which is still in our receive buffer
// (docs/bootstrap-hierarchy.md#abort-frames). Frames of data before it are
// skipped, within salvageWithin in all; nil when there is none.
func salvageAbort(l *link) *RingAbortError {
	if l == nil || l.c == nil {
		return nil
	}
	_ = l.c.SetReadDeadline(time.Now().Add(salvageWithin))
	var hdr [frameSizeBytes]byte
	for range 64 {
		if _, err := io.ReadFull(l.in(), hdr[:]); err != nil {
			return nil
		}
		size := int32(leUint32(hdr[:]))
		if size == int32(abi.BootstrapFrameAbort) {
			ra, err := ReadAbortFrame(l.in(), l.peer)
			if err != nil {
				return nil
			}
			ra.via = l
			return ra
		}
		if size < 0 || size > 1<<24 {
			return nil
		}
		if _, err := io.CopyN(io.Discard, l.in(), int64(size)); err != nil {
			return nil
		}
	}
	return nil
}
