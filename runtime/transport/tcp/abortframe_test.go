package tcp

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
)

func TestAbortFrameRoundTrip(t *testing.T) {
	addr := netip.MustParseAddrPort("127.0.0.1:4242")
	frame := abortFrame(6, &ringFault{phase: abi.BootstrapPhaseIntraRing, step: 3, dead: 5, addr: addr}, "rank 6: it went\x1b[2J")
	if got := int32(leUint32(frame)); got != int32(abi.BootstrapFrameAbort) {
		t.Fatalf("size prefix %d, want BOOTSTRAP_FRAME_ABORT", got)
	}
	ra, err := ReadAbortFrame(bytes.NewReader(frame[frameSizeBytes:]), "rank 6 (peer x)")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ra.raw, frame) {
		t.Fatal("the frame passed on is not the frame received")
	}
	msg := ra.Error()
	for _, want := range []string{"aborted by rank 6", "rank 5 (127.0.0.1:4242)", "intra ring all-gather, step 3", `\x1b`} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	// Planted faults: a bad magic, a text over the bound, a cut-short body.
	bad := append([]byte(nil), frame[frameSizeBytes:]...)
	bad[0] ^= 0xff
	if _, err := ReadAbortFrame(bytes.NewReader(bad), "p"); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("bad magic: %v", err)
	}
	long := append([]byte(nil), frame[frameSizeBytes:]...)
	long[48], long[49] = 0xff, 0xff
	if _, err := ReadAbortFrame(bytes.NewReader(long), "p"); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("long text: %v", err)
	}
	if _, err := ReadAbortFrame(bytes.NewReader(frame[frameSizeBytes:20]), "p"); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("short body: %v", err)
	}
}

// FuzzAbortFrame feeds arbitrary bytes to the abort frame reader: a frame
// or an error, never a panic, never more text than the bound.
func FuzzAbortFrame(f *testing.F) {
	f.Add(abortFrame(1, &ringFault{phase: abi.BootstrapPhaseFlatRing, dead: 0, addr: netip.MustParseAddrPort("[::1]:9")}, "x")[frameSizeBytes:])
	f.Add([]byte{0x69, 0x6c, 0x79, 0x61})
	f.Fuzz(func(t *testing.T, data []byte) {
		ra, err := ReadAbortFrame(bytes.NewReader(data), "the fuzzer")
		if err != nil {
			return
		}
		if len(ra.Text) > int(abi.BootstrapAbortTextMax) {
			t.Fatalf("%d bytes of text past the bound", len(ra.Text))
		}
		_ = ra.Error()
	})
}

// FuzzRootRange feeds arbitrary 32-byte records to the check of the
// previous root's range: only the rule's own range passes.
func FuzzRootRange(f *testing.F) {
	good := abi.BootstrapRootRange{Sanity: abi.BootstrapRootSanity, Nroots: 3, Index: 0, Nranks: 12, Lo: 0, Count: 4}
	b := make([]byte, abi.SizeofBootstrapRootRange)
	good.MarshalTo(b)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < abi.SizeofBootstrapRootRange {
			return
		}
		r := &Root{n: NewNet(Config{Logger: quietLog}), nranks: 12, global: true,
			ring: &rootRing{roots: make([]netip.AddrPort, 3), index: 1, lo: 4, hi: 8}}
		rc := &rankConn{l: &link{}, remote: "fuzz"}
		err := r.takeRange(rc, data[:abi.SizeofBootstrapRootRange])
		var rg abi.BootstrapRootRange
		rg.UnmarshalFrom(data)
		ok := rg.Sanity == abi.BootstrapRootSanity && rg.Nroots == 3 && rg.Index == 0 && rg.Nranks == 12 && rg.PerInstance == 0 && rg.Lo == 0 && rg.Count == 4
		if (err == nil) != ok {
			t.Fatalf("record %+v: err %v", rg, err)
		}
	})
}
