package tcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/hostile"
)

// hostileText is what a forging peer puts in an ABORT: a terminal escape, a
// bell, invalid UTF-8 and a newline that starts a log line of its own.
const hostileText = "\x1b[31mred\x07\xff\ntime=now level=ERROR msg=\"rank 2 forged this\""

// rawBytes reports the first byte of s a terminal or a log would take as
// something other than text: a control byte or invalid UTF-8.
func rawBytes(s string) (int, bool) {
	for i, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return i, true
		}
	}
	return 0, false
}

func noRawBytes(t *testing.T, where, s string) {
	t.Helper()
	if i, ok := rawBytes(s); ok {
		t.Errorf("%s carries a raw byte %q at %d: %q", where, s[i], i, s)
	}
}

// recordingLog keeps every record's message and attributes as they would be
// written by a handler that does no quoting of its own.
type recordingLog struct {
	mu    sync.Mutex
	lines []string
}

func (h *recordingLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordingLog) WithGroup(string) slog.Handler            { return h }
func (h *recordingLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%s", a.Key, a.Value.String())
		return true
	})
	h.mu.Lock()
	h.lines = append(h.lines, b.String())
	h.mu.Unlock()
	return nil
}

func (h *recordingLog) check(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lines {
		noRawBytes(t, "a log line", l)
	}
}

func hello(rank, nranks int, channel uint32) []byte {
	var b [abi.SizeofBootstrapPeerHello]byte
	h := abi.BootstrapPeerHello{Sanity: abi.BootstrapSanity, Rank: int32(rank), Nranks: int32(nranks), Channel: channel}
	h.MarshalTo(b[:])
	return frame(abi.BootstrapMsgHello, b[:])
}

// defaultFrame is one frame of the default framing.
func defaultFrame(p []byte) []byte { return append(putInt(len(p)), p...) }

// waitAborted waits (at most 5 s) until e has recorded a failure.
func waitAborted(t *testing.T, e *Endpoint) {
	t.Helper()
	select {
	case <-e.st.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the endpoint did not take the ABORT")
	}
}

// TestPeerAbortTextEscaped: the text of an extended-mode ABORT is the
// peer's; it reaches a rank's error, the root's error and both logs with
// its control bytes escaped, and next to the address it came from.
func TestPeerAbortTextEscaped(t *testing.T) {
	t.Run("to a rank, from a stranger claiming rank 1", func(t *testing.T) {
		log := &recordingLog{}
		eps, errs, _ := worldExt(t, 2, false, 3*time.Second, func(_ int, c *Config) { c.Logger = slog.New(log) })
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		c, err := net.Dial("tcp", eps[0].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(append(hello(1, 2, abi.BootstrapChannelAbort), frame(abi.BootstrapMsgAbort, []byte(hostileText))...))
		waitAborted(t, eps[0])
		err = eps[0].Recv(1, make([]byte, 4))
		if err == nil {
			t.Fatal("no error after the ABORT")
		}
		noRawBytes(t, "rank 0's error", err.Error())
		if want := "rank 1 (peer " + c.LocalAddr().String() + ")"; !strings.Contains(err.Error(), want) {
			t.Errorf("rank 0's error %q does not name %q", err, want)
		}
		log.check(t)
	})
	t.Run("to the root, from a rank", func(t *testing.T) {
		log := &recordingLog{}
		n := NewNet(Config{Timeout: 3 * time.Second, IfName: "lo", Logger: slog.New(log), Extended: true})
		root := loopRoot(t, n, 2, false)
		var rank0 error
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, rank0 = testNetExt(t, 3*time.Second).InitFlat(t.Context(), root.Addr(), 0, 2, false)
		}()
		r := newRogue(t, root.Addr(), append(frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, 2, nil)),
			frame(abi.BootstrapMsgAbort, []byte(hostileText))...), false)
		err := root.Wait()
		<-done
		if err == nil || rank0 == nil {
			t.Fatalf("root %v, rank 0 %v: want both failed", err, rank0)
		}
		noRawBytes(t, "the root's error", err.Error())
		noRawBytes(t, "rank 0's error", rank0.Error())
		noRawBytes(t, "the ABORT the root sent on", <-r.got)
		if want := "peer " + r.local; !strings.Contains(err.Error(), want) {
			t.Errorf("the root's error %q does not name %q", err, want)
		}
		log.check(t)
	})
	t.Run("to a rank, from its root", func(t *testing.T) {
		ln := loopbackListener(t)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			c.Write(frame(abi.BootstrapMsgAbort, []byte(hostileText)))
			io.Copy(io.Discard, c)
		}()
		log := &recordingLog{}
		n := NewNet(Config{Timeout: 3 * time.Second, IfName: "lo", Logger: slog.New(log), Extended: true})
		_, err := n.InitFlat(t.Context(), netip.MustParseAddrPort(ln.Addr().String()), 1, 2, false)
		if err == nil {
			t.Fatal("no error")
		}
		noRawBytes(t, "the rank's error", err.Error())
		log.check(t)
	})
	t.Run("read directly", func(t *testing.T) {
		a, b := net.Pipe()
		go func() {
			a.Write(frame(abi.BootstrapMsgAbort, []byte(hostileText)))
			a.Close()
		}()
		l := &link{c: b, peer: "the test", timeout: time.Second}
		_, _, err := l.recvAny("", 0, false)
		var ab *AbortError
		if !errors.As(err, &ab) {
			t.Fatalf("%v: want an ABORT", err)
		}
		noRawBytes(t, "AbortError.Error", ab.Error())
		if ab.Reason != hostileText {
			t.Errorf("Reason %q: the text as sent is kept for callers that escape it themselves", ab.Reason)
		}
		for _, pt := range hostile.PeerTexts() {
			noRawBytes(t, pt.Name, (&AbortError{From: "x", Reason: pt.Text}).Error())
			var h abi.NcclNRTGitHash
			copy(h.Nccom[:], pt.Text)
			copy(h.NRT[:], pt.Text)
			noRawBytes(t, pt.Name+" as a git hash", formatGitHash(h))
		}
	})
}

// TestPeerGitHashEscaped: the git-hash tags of a global init are the
// peers' bytes; a root refusing a mismatch shows them escaped.
func TestPeerGitHashEscaped(t *testing.T) {
	bad := abi.NcclNRTGitHash{}
	copy(bad.Nccom[:], "\x1b[2J\x07\nX")
	copy(bad.NRT[:], "\xff\xfe\r\x00ok")
	good, _ := GitHash(SpecVersions{})
	for _, extended := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", extended), func(t *testing.T) {
			log := &recordingLog{}
			n := NewNet(Config{Timeout: 3 * time.Second, IfName: "lo", Logger: slog.New(log), Extended: extended})
			root := loopRoot(t, n, 3, true)
			for rank, h := range []abi.NcclNRTGitHash{good, good, bad} {
				rec := record(abi.BootstrapSanity, rank, 3, &h)
				if extended {
					newRogue(t, root.Addr(), frame(abi.BootstrapMsgInfoToRoot, rec), false)
				} else {
					newRogue(t, root.Addr(), defaultFrame(rec), false)
				}
			}
			err := root.Wait()
			if err == nil || !strings.Contains(err.Error(), "nccl_nrt_git_hash") {
				t.Fatalf("%v: want the git-hash mismatch", err)
			}
			noRawBytes(t, "the root's error", err.Error())
			log.check(t)
		})
	}
}

// TestForgedHelloNamesPeer: the rank a point-to-point connection claims is
// unauthenticated; a failure on it names the address it came from.
func TestForgedHelloNamesPeer(t *testing.T) {
	for _, extended := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", extended), func(t *testing.T) {
			eps, errs, _ := worldIn(t, extended, 3, false, 2*time.Second, nil)
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			c, err := net.Dial("tcp", eps[0].Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if extended {
				c.Write(hello(2, 3, abi.BootstrapChannelPeer))
			} else {
				c.Write(append(defaultFrame(putInt(2)), defaultFrame(putInt(int(abi.BootstrapP2PTag)))...))
			}
			c.Write([]byte{1}) // one byte of a frame, then gone
			time.Sleep(100 * time.Millisecond)
			c.Close()
			err = eps[0].Recv(2, make([]byte, 4))
			if want := "rank 2 (peer " + c.LocalAddr().String() + ")"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v: want the failure put down to %q", err, want)
			}
		})
	}
}

// TestOutOfRangeRankIsNamed: a record claiming rank 7 or -1 of a world of 3
// is out of range, said so with the peer's address, in both framings.
func TestOutOfRangeRankIsNamed(t *testing.T) {
	for _, extended := range []bool{false, true} {
		for _, rank := range append([]int{7}, hostile.PeerRanks(3)...) {
			t.Run(fmt.Sprintf("extended=%v/rank=%d", extended, rank), func(t *testing.T) {
				n := testNet(t, 2*time.Second)
				if extended {
					n = testNetExt(t, 2*time.Second)
				}
				root := loopRoot(t, n, 3, false)
				rec := record(abi.BootstrapSanity, rank, 3, nil)
				var r *rogue
				if extended {
					r = newRogue(t, root.Addr(), frame(abi.BootstrapMsgInfoToRoot, rec), false)
				} else {
					r = newRogue(t, root.Addr(), defaultFrame(rec), false)
				}
				err := root.Wait()
				if err == nil {
					t.Fatal("the root took the record")
				}
				for _, want := range []string{"out of range", "peer " + r.local, fmt.Sprint("rank ", rank)} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%q lacks %q", err, want)
					}
				}
				if strings.Contains(err.Error(), "already checked in") {
					t.Errorf("%q: an out-of-range rank reported as a duplicate", err)
				}
			})
		}
	}
}

// The drip tests: every wait is a total deadline, so a peer that sends a
// byte every 1.4 s against a 2 s timeout is given up on within timeout + 2 s
// (docs/bootstrap.md#bounds-and-tests: a timeout restarted on progress
// would let such a peer hold a rank for ever).
const (
	dripTimeout = 2 * time.Second
	dripEvery   = 1400 * time.Millisecond
	dripBound   = dripTimeout + 2*time.Second
)

// drip writes data to c one byte at a time until it is written, c fails or
// stop closes.
func drip(c net.Conn, data []byte, stop <-chan struct{}) {
	for _, b := range data {
		if _, err := c.Write([]byte{b}); err != nil {
			return
		}
		select {
		case <-time.After(dripEvery):
		case <-stop:
			return
		}
	}
}

func TestDripAgainstRootIsBounded(t *testing.T) {
	for _, extended := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", extended), func(t *testing.T) {
			t.Parallel()
			n := testNet(t, dripTimeout)
			if extended {
				n = testNetExt(t, dripTimeout)
			}
			root := loopRoot(t, n, 2, false)
			start := time.Now()
			var rank0 error
			var took0 time.Duration
			done := make(chan struct{})
			go func() {
				defer close(done)
				c := Config{Timeout: dripTimeout, IfName: "lo", Logger: quietLog, Extended: extended}
				_, rank0 = NewNet(c).InitFlat(t.Context(), root.Addr(), 0, 2, false)
				took0 = time.Since(start)
			}()
			c, err := net.Dial("tcp", root.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			defer c.Close()
			rec := record(abi.BootstrapSanity, 1, 2, nil)
			if extended {
				go drip(c, frame(abi.BootstrapMsgInfoToRoot, rec), stop)
			} else {
				go drip(c, defaultFrame(rec), stop)
			}
			err = root.Wait()
			if took := time.Since(start); took > dripBound {
				t.Errorf("the root took %s facing a drip, more than %s: %v", took, dripBound, err)
			}
			if err == nil || !strings.Contains(err.Error(), c.LocalAddr().String()) {
				t.Errorf("%v: want the dripping peer named", err)
			}
			<-done
			if rank0 == nil || took0 > dripBound+time.Second {
				t.Errorf("rank 0 took %s: %v", took0, rank0)
			}
		})
	}
}

func TestDripAgainstRankIsBounded(t *testing.T) {
	for _, extended := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", extended), func(t *testing.T) {
			t.Parallel()
			ln := loopbackListener(t)
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				// Take the record, then answer a byte at a time.
				want := abi.SizeofExtInfo + frameSizeBytes
				reply := defaultFrame(make([]byte, abi.SizeofBootstrapRootReply))
				if extended {
					want = abi.SizeofExtInfo + int(abi.BootstrapMsgHeaderSize)
					reply = frame(abi.BootstrapMsgInfoFromRoot, make([]byte, abi.SizeofBootstrapRootReply))
				}
				if _, err := io.ReadFull(c, make([]byte, want)); err != nil {
					return
				}
				drip(c, reply, stop)
			}()
			n := testNet(t, dripTimeout)
			if extended {
				n = testNetExt(t, dripTimeout)
			}
			start := time.Now()
			_, err := n.InitFlat(t.Context(), netip.MustParseAddrPort(ln.Addr().String()), 1, 2, false)
			if took := time.Since(start); took > dripBound {
				t.Errorf("the rank took %s facing a dripping root, more than %s: %v", took, dripBound, err)
			}
			if err == nil || !strings.Contains(err.Error(), "stalled after") {
				t.Errorf("%v: want the stall named", err)
			}
		})
	}
}

// TestFrameDeadlineIsTotal: a default frame's size and data share one
// deadline. A root that sends the size a byte every 0.6 s (done just inside
// the timeout) and then drips the data used to get a fresh timeout for the
// data: 2 timeouts in all.
func TestFrameDeadlineIsTotal(t *testing.T) {
	ln := loopbackListener(t)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := io.ReadFull(c, make([]byte, abi.SizeofExtInfo+frameSizeBytes)); err != nil {
			return
		}
		for _, b := range putInt(abi.SizeofBootstrapRootReply) {
			c.Write([]byte{b})
			select {
			case <-time.After(600 * time.Millisecond):
			case <-stop:
				return
			}
		}
		drip(c, make([]byte, abi.SizeofBootstrapRootReply), stop)
	}()
	start := time.Now()
	_, err := testNet(t, dripTimeout).InitFlat(t.Context(), netip.MustParseAddrPort(ln.Addr().String()), 1, 2, false)
	if took := time.Since(start); took > dripTimeout+time.Second {
		t.Errorf("the rank took %s, more than one %s timeout: %v", took, dripTimeout, err)
	}
	if err == nil {
		t.Error("no error")
	}
}

func TestStrangersDoNotProlongRecv(t *testing.T) {
	for _, extended := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", extended), func(t *testing.T) {
			t.Parallel()
			eps, errs, _ := worldIn(t, extended, 2, false, dripTimeout, nil)
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					if c, err := net.Dial("tcp", eps[0].Addr().String()); err == nil {
						c.Write([]byte{0xde, 0xad})
						defer c.Close()
					}
					select {
					case <-time.After(time.Second):
					case <-stop:
						return
					}
				}
			}()
			start := time.Now()
			err := eps[0].Recv(1, make([]byte, 4))
			if took := time.Since(start); took > dripBound {
				t.Errorf("Recv took %s while strangers connected once a second, more than %s", took, dripBound)
			}
			if err == nil || !strings.Contains(err.Error(), "did not connect within") {
				t.Errorf("%v: want rank 1 named as never connecting", err)
			}
		})
	}
}
