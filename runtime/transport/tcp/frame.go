package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// msgNames are the spec names of the frame types, for messages.
var msgNames = map[uint32]string{
	abi.BootstrapMsgInfoToRoot:   "INFO_TO_ROOT",
	abi.BootstrapMsgInfoFromRoot: "INFO_FROM_ROOT",
	abi.BootstrapMsgRootWait:     "ROOT_WAIT",
	abi.BootstrapMsgRingDone:     "RING_DONE",
	abi.BootstrapMsgComplete:     "COMPLETE",
	abi.BootstrapMsgAbort:        "ABORT",
	abi.BootstrapMsgHello:        "HELLO",
	abi.BootstrapMsgRingData:     "RING_DATA",
	abi.BootstrapMsgPeerData:     "PEER_DATA",
}

func msgName(t uint32) string {
	if n, ok := msgNames[t]; ok {
		return n
	}
	return fmt.Sprintf("unknown message type %d", t)
}

// AbortError is a failure another party of the bootstrap reported: the
// reason names the peer that failed first.
type AbortError struct {
	From   string // who sent the ABORT: a claimed rank comes with the address it came from
	Reason string // the text as the peer sent it; Error shows it escaped
}

// Error shows the reason escaped: it is the peer's text, and a peer could
// otherwise write terminal escapes or whole forged lines into every log the
// error reaches (docs/bootstrap.md#bounds-and-tests).
func (e *AbortError) Error() string {
	return "bootstrap aborted by " + e.From + ": " + cfmt.Escape(e.Reason, cfmt.PeerTextMax)
}

// hangUp is a peer that closed its connection: often not the first failure
// but the echo of one (the peer gave up because of an ABORT of its own).
type hangUp struct{ msg string }

func (e *hangUp) Error() string { return e.msg }

// errClosed is what an operation interrupted by Close returns.
var errClosed = errors.New("bootstrap endpoint closed")

// link is one bootstrap socket and the party at its other end.
type link struct {
	c       net.Conn
	peer    string // "rank 3 (127.0.0.1:40001)", "the root 127.0.0.1:5000"
	timeout time.Duration
	st      *abortState // interrupts blocked operations; may be nil
	// until, when set, is a total deadline no read passes, however many
	// frames arrive before it: the wait for one root answer, which
	// ROOT_WAIT heartbeats must not stretch (docs/bootstrap.md#bounds-and-tests).
	until   time.Time
	waitFor time.Duration // what until allows in all, for the error
	hdr     [abi.BootstrapMsgHeaderSize]byte
	r       *bufio.Reader // header and payload usually arrive in one read
}

func (l *link) in() *bufio.Reader {
	if l.r == nil {
		l.r = bufio.NewReaderSize(l.c, 4096)
	}
	return l.r
}

func (l *link) cause() error {
	if l.st == nil {
		return nil
	}
	return l.st.cause()
}

// send writes one frame within the timeout: header and payload in one
// gathered write, without copying the payload.
func (l *link) send(typ uint32, payload []byte) error {
	return l.writeAll("sending "+msgName(typ)+" to", msgBufs(typ, payload))
}

// writeAll writes bufs in one gathered write (one writev) within the
// timeout, the link's cause first; what names the write in an error
// ("sending X to"). Several frames meant for the peer at once go out
// together: each write on loopback wakes the reader, and a rank's
// wake-ups are what a world of more ranks than cores pays for
// (docs/benchmarks.md#the-agree-phase-s-cpu-2026-12-04).
func (l *link) writeAll(what string, bufs net.Buffers) error {
	if err := l.c.SetWriteDeadline(time.Now().Add(l.timeout)); err != nil {
		return l.ioErr(what, err)
	}
	if err := l.cause(); err != nil {
		return err
	}
	if _, err := bufs.WriteTo(l.c); err != nil {
		return l.ioErr(what, err)
	}
	return nil
}

// msgBufs is one extended frame (header, payload) ready for writeAll.
func msgBufs(typ uint32, payload []byte) net.Buffers {
	var hdr [abi.BootstrapMsgHeaderSize]byte
	h := abi.BootstrapMsgHeader{Type: typ, Length: uint32(len(payload))}
	h.MarshalTo(hdr[:])
	return net.Buffers{hdr[:], payload}
}

// recvHeader reads the next header within the timeout (none when idle is
// set: the caller watches the link for as long as it lives).
func (l *link) recvHeader(waiting string, idle bool) (abi.BootstrapMsgHeader, error) {
	var h abi.BootstrapMsgHeader
	d := time.Time{}
	if !idle {
		d = time.Now().Add(l.timeout)
		if !l.until.IsZero() && l.until.Before(d) {
			d = l.until
		}
	}
	if err := l.c.SetReadDeadline(d); err != nil {
		return h, l.ioErr(waiting+" from", err)
	}
	if err := l.cause(); err != nil {
		return h, err
	}
	if n, err := io.ReadFull(l.in(), l.hdr[:]); err != nil {
		return h, l.readErr(waiting, err, n, len(l.hdr), "a frame header")
	}
	h.UnmarshalFrom(l.hdr[:])
	if h.Type == abi.BootstrapMsgAbort {
		return h, l.readAbort(h)
	}
	return h, nil
}

func (l *link) readAbort(h abi.BootstrapMsgHeader) error {
	if h.Length > abi.BootstrapAbortTextMax {
		return fmt.Errorf("%s sent an ABORT of %d bytes (at most %d): not a bootstrap peer of this release", l.peer, h.Length, abi.BootstrapAbortTextMax)
	}
	text := make([]byte, h.Length)
	if n, err := io.ReadFull(l.in(), text); err != nil {
		return l.readErr("reading an ABORT", err, n, len(text), "ABORT")
	}
	return &AbortError{From: l.peer, Reason: string(text)}
}

// recv reads one frame of type want whose payload is exactly len(into).
func (l *link) recv(want uint32, into []byte) error {
	name := msgName(want)
	h, err := l.recvHeader("waiting for "+name, false)
	if err != nil {
		return err
	}
	if h.Type != want {
		return fmt.Errorf("%s sent %s where %s was due: the peers disagree on the protocol", l.peer, msgName(h.Type), name)
	}
	if int(h.Length) != len(into) {
		return fmt.Errorf("%s sent a %d-byte %s where %d bytes were due: the peers disagree on the message size", l.peer, h.Length, name, len(into))
	}
	if n, err := io.ReadFull(l.in(), into); err != nil {
		return l.readErr("reading "+name, err, n, len(into), name)
	}
	return nil
}

// recvAny reads one frame of any type with a payload of at most max bytes.
// An ABORT comes back as an *AbortError.
func (l *link) recvAny(waiting string, max int, idle bool) (uint32, []byte, error) {
	h, err := l.recvHeader(waiting, idle)
	if err != nil {
		return 0, nil, err
	}
	if int(h.Length) > max {
		return h.Type, nil, fmt.Errorf("%s sent a %d-byte %s, more than the %d bytes it may carry", l.peer, h.Length, msgName(h.Type), max)
	}
	p := make([]byte, h.Length)
	if n, err := io.ReadFull(l.in(), p); err != nil {
		return h.Type, p[:n], l.readErr("reading "+msgName(h.Type), err, n, len(p), msgName(h.Type))
	}
	return h.Type, p, nil
}

// readErr explains a failed read: an abort, a timeout, a hang-up, or a
// hang-up part-way through a message.
func (l *link) readErr(waiting string, err error, got, want int, what string) error {
	if c := l.cause(); c != nil {
		return c
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout() && got > 0:
		// A peer that stalls part-way is named with how far it got, not
		// confused with one that never spoke.
		return fmt.Errorf("%s: %s stalled after %d of %d bytes of %s for %s (%s)", waiting, l.peer, got, want, what, l.timeout, abi.EnvSockTimeout)
	case errors.As(err, &ne) && ne.Timeout() && !l.until.IsZero() && !time.Now().Before(l.until):
		return fmt.Errorf("%s: %s", waiting, noAnswer(l.peer, l.waitFor, l.timeout))
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%s: nothing from %s within %s (%s)", waiting, l.peer, l.timeout, abi.EnvSockTimeout)
	case got > 0 && got < want:
		return &hangUp{fmt.Sprintf("%s closed the connection after %d of %d bytes of %s", l.peer, got, want, what)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return &hangUp{fmt.Sprintf("%s: %s closed the connection (did its process die?)", waiting, l.peer)}
	}
	return fmt.Errorf("%s: %s: %w", waiting, l.peer, err)
}

func (l *link) ioErr(what string, err error) error {
	if c := l.cause(); c != nil {
		return c
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%s %s: not done within %s (%s)", what, l.peer, l.timeout, abi.EnvSockTimeout)
	}
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return &hangUp{fmt.Sprintf("%s %s: the connection is gone (did its process die?)", what, l.peer)}
	}
	return fmt.Errorf("%s %s: %w", what, l.peer, err)
}

func (l *link) close() {
	if l != nil && l.c != nil {
		l.c.Close()
	}
}

// dial connects to addr within the timeout, retrying while nobody listens
// yet (a rank may start before the root or its ring successor). An abort of
// st, the caller's context ending among them, ends the wait at once.
func dial(addr string, peer string, timeout time.Duration, st *abortState) (*link, error) {
	return dialWatching(addr, peer, timeout, st, nil)
}

// dialWatching is dial that also gives up, with errRingLinkEnded, once gone
// is cancelled: the party it dials is a ring neighbour whose ring link ended
// (ringgone.go).
func dialWatching(addr string, peer string, timeout time.Duration, st *abortState, gone context.Context) (*link, error) {
	deadline := time.Now().Add(timeout)
	wait := 5 * time.Millisecond
	ctx, cancel := context.WithDeadline(st.ctx, deadline)
	defer cancel()
	if gone != nil {
		// Registered with gone's cancellation, no goroutine until it fires.
		defer context.AfterFunc(gone, cancel)()
	}
	// No TCP keepalive (Go turns it on, 3 setsockopts a socket): its 15 s
	// probes find nothing within the bootstrap's own bounds, which end a
	// silent peer's wait (the socket timeout, a ring link ending).
	d := net.Dialer{KeepAlive: -1}
	for {
		if err := st.cause(); err != nil {
			return nil, err
		}
		if isClosed(gone) {
			return nil, fmt.Errorf("connecting to %s: %w", peer, errRingLinkEnded)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("cannot connect to %s within %s (%s)", peer, timeout, abi.EnvSockTimeout)
		}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return &link{c: c, peer: peer, timeout: timeout, st: st}, nil
		}
		if cause := st.cause(); cause != nil {
			return nil, cause
		}
		if isClosed(gone) {
			return nil, fmt.Errorf("connecting to %s: %w", peer, errRingLinkEnded)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, fmt.Errorf("cannot connect to %s within %s (%s)", peer, timeout, abi.EnvSockTimeout)
			}
			return nil, fmt.Errorf("cannot connect to %s: %w", peer, err)
		}
		if time.Until(deadline) < wait {
			return nil, fmt.Errorf("cannot connect to %s within %s (%s): connection refused, nobody listens there", peer, timeout, abi.EnvSockTimeout)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// abortState turns the first failure anywhere into the failure of every
// operation blocked on the registered sockets: they get a deadline in the
// past and report the cause instead of their own error. The end of the
// caller's context is one such failure (newAbortState): the cause then
// wraps context.Cause, and says the wait was cancelled.
type abortState struct {
	mu      sync.Mutex
	err     error
	done    chan struct{}
	targets []deadliner
	// ctx ends when the state aborts, for the waits no deadline reaches
	// (a dial, a pause between dials).
	ctx     context.Context
	cancel  context.CancelCauseFunc
	unwatch func() bool // stops watching the caller's context

	parent    context.Context
	cancelled func(cause error) error
	// deaf is Hooks.Deaf: a planted fault's rank that drops the abort
	// frames its links carry as well as leaving its ring unwatched.
	deaf bool
}

type deadliner interface{ SetDeadline(time.Time) error }

// newAbortState is a state that parent's end aborts with
// cancelled(context.Cause(parent)); a parent already done aborts it at once.
func newAbortState(parent context.Context, cancelled func(cause error) error) *abortState {
	s := &abortState{done: make(chan struct{}), parent: parent, cancelled: cancelled}
	// Not derived from parent: ctx ending must mean the cause is recorded.
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	if s.cause() != nil {
		return s
	}
	stop := context.AfterFunc(parent, func() { s.abort(cancelled(context.Cause(parent))) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		stop()
		return s
	}
	s.unwatch = stop
	return s
}

// cancelledErr is the cause a rank's state records when its context ends.
func cancelledErr(cause error) error { return fmt.Errorf("cancelled: %w", cause) }

func (s *abortState) cause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && s.parent.Err() != nil {
		// The context has ended but the abort it triggers may not have run
		// yet: a failure it provoked elsewhere first (a root in this
		// process hanging up on this rank) must still be put down to it.
		s.abortLocked(s.cancelled(context.Cause(s.parent)))
	}
	return s.err
}

// add registers d; if the state already failed, d is interrupted at once.
func (s *abortState) add(d deadliner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.targets = append(s.targets, d)
	if s.err != nil {
		_ = d.SetDeadline(time.Unix(1, 0))
	}
}

// abort records err (the first one wins) and interrupts every target. It
// reports whether err was the first.
func (s *abortState) abort(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abortLocked(err)
}

func (s *abortState) abortLocked(err error) bool {
	if s.err != nil {
		return false
	}
	s.err = err
	close(s.done)
	s.cancel(err)
	for _, d := range s.targets {
		_ = d.SetDeadline(time.Unix(1, 0))
	}
	if s.unwatch != nil {
		s.unwatch()
	}
	return true
}

// release stops watching the caller's context once the state's work is
// done without an abort (a root whose world is complete).
func (s *abortState) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unwatch != nil {
		s.unwatch()
	}
}

// sleep pauses for d unless the state aborts first, which it reports.
func (s *abortState) sleep(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.done:
		return s.cause()
	}
}

// noAnswer says that peer, the root, gave no answer within the total a
// rank waits for one, however many ROOT_WAIT heartbeats it sent
// (docs/bootstrap.md#bounds-and-tests): the same words for each answer
// awaited, whichever timer ended the wait.
func noAnswer(peer string, within, timeout time.Duration) string {
	return fmt.Sprintf("%s sent no answer within %s in all (3 × %s, %s): its ROOT_WAIT heartbeats do not extend the wait", peer, within, timeout, abi.EnvSockTimeout)
}
