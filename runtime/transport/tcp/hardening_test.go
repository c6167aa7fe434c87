package tcp

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// TestSockTimeoutOverflow: a timeout too large for a time.Duration used to
// wrap (18446744074 s became 290 ms, 9223372037 s a negative duration that
// silently fell back to 30 s). Anything above the stated maximum is refused
// by name; the maximum itself is taken.
func TestSockTimeoutOverflow(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, v := range []string{"18446744074", "9223372037", "86401", "99999999999999999999", "-1"} {
		_, err := ConfigFromEnv(env(map[string]string{abi.EnvSockTimeout: v}))
		if err == nil || !strings.Contains(err.Error(), abi.EnvSockTimeout) || !strings.Contains(err.Error(), "1..86400") {
			t.Errorf("%s=%s: error %v; want a refusal stating the maximum", abi.EnvSockTimeout, v, err)
		}
	}
	c, err := ConfigFromEnv(env(map[string]string{abi.EnvSockTimeout: "86400"}))
	if err != nil || c.Timeout != 24*time.Hour {
		t.Errorf("the maximum: %v, %v", c.Timeout, err)
	}
}

// TestWorldSizeBound: a world beyond MaxRanks is refused before anything is
// allocated for it.
func TestWorldSizeBound(t *testing.T) {
	n := testNet(t, time.Second)
	if _, err := n.CreateRoot(t.Context(), loopAny, 100000000, true); err == nil || !strings.Contains(err.Error(), "1..65536") {
		t.Errorf("a root for 1e8 ranks: %v", err)
	}
	if _, err := n.InitFlat(t.Context(), loopAny, 0, 100000000, true); err == nil || !strings.Contains(err.Error(), "1..65536") {
		t.Errorf("a rank of 1e8: %v", err)
	}
}

// TestStalledPeerIsNamed: a peer that stalls part-way through a frame's
// size (a slow loris) is named, with how far it got, in both framings.
func TestStalledPeerIsNamed(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, extended := range []bool{false, true} {
		eps, errs, _ := worldIn(t, extended, 2, false, timeout, nil)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		// A process claiming rank 1 opens a point-to-point connection to
		// rank 0 the way rank 1 would, then stalls after 2 bytes of a size.
		c, err := net.Dial("tcp", eps[0].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		l := &link{c: c, peer: "rank 0", timeout: timeout}
		fake := &Endpoint{n: eps[1].n, rank: 1, size: 2}
		if err := fake.openPeer(l); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte{4, 0}); err != nil {
			t.Fatal(err)
		}
		eps[1].Close() // the real rank 1 says nothing
		err = eps[0].Recv(1, make([]byte, 4))
		c.Close()
		if err == nil || !strings.Contains(err.Error(), "rank 1 (") || !strings.Contains(err.Error(), "stalled after 2 of") {
			t.Errorf("extended=%v: %v; want the stall blamed on rank 1 with its progress", extended, err)
		}
	}
}

// FuzzBootstrapFrames feeds arbitrary bytes to the frame readers of both
// framings, as a peer would send them: each must end with a frame or an
// error, never a panic, and never take more than the frame's own bound.
func FuzzBootstrapFrames(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0, 1, 2, 3, 4})                      // default: one 4-byte frame
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0})                   // default: a huge size
	f.Add([]byte{0xfe, 0xff, 0xff, 0xff})                      // default: a negative size
	f.Add([]byte{6, 0, 0, 0, 3, 0, 0, 0, 'b', 'a', 'd'})       // extended: an ABORT
	f.Add([]byte{6, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'x'})     // extended: an ABORT too long
	f.Add([]byte{7, 0, 0, 0, 16, 0, 0, 0, 'i', 'l', 'y', 'a'}) // extended: a HELLO cut short
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, extended := range []bool{false, true} {
			a, b := net.Pipe()
			go func() {
				_, _ = a.Write(data)
				a.Close()
			}()
			l := &link{c: b, peer: "the fuzzer", timeout: time.Second}
			for i := 0; i < 64; i++ {
				var err error
				if extended {
					var p []byte
					_, p, err = l.recvAny("fuzzing", 4096, false)
					if len(p) > 4096 {
						t.Fatalf("a %d-byte payload past the 4096-byte bound", len(p))
					}
				} else {
					buf := make([]byte, 64)
					var n int
					n, err = l.recvFrame(buf, "a frame")
					if n > len(buf) {
						t.Fatalf("recvFrame reports %d bytes into a %d-byte buffer", n, len(buf))
					}
				}
				if err != nil {
					var ab *AbortError
					if errors.As(err, &ab) && len(ab.Reason) > int(abi.BootstrapAbortTextMax) {
						t.Fatalf("an ABORT of %d bytes", len(ab.Reason))
					}
					break
				}
			}
			b.Close()
		}
	})
}
