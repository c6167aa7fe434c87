package tcp

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

func TestGitHashWeldsBothBuilds(t *testing.T) {
	h, err := GitHash(SpecVersions{})
	if err != nil {
		t.Fatal(err)
	}
	var b [abi.NcclNRTGitHashSize]byte
	h.MarshalTo(b[:])
	if want := first8(abi.LibnccomGit) + first8(ReleaseNRTGit()); string(b[:]) != want {
		t.Errorf("tag %q, want %q (8 bytes of libnccom's hash, then 8 of libnrt's)", b, want)
	}
	h2, _ := GitHash(SpecVersions{NRTGit: "ffffffffffff"})
	if h2.Nccom != h.Nccom || h2.NRT == h.NRT || string(h2.NRT[:]) != "ffffffff" {
		t.Errorf("a different libnrt changes only the second half: %q vs %q", h2, h)
	}
}

// first8 is the first 8 bytes of a git hash, zero-padded as the C copy leaves
// a shorter one.
func first8(s string) string {
	b := make([]byte, 8)
	copy(b, s)
	return string(b)
}

type brokenVersions struct{ SpecVersions }

func (brokenVersions) NRTVersion() (abi.NRTVersion, error) {
	return abi.NRTVersion{}, errors.New("libnrt is not loaded")
}

func TestGitHashReportsItsSource(t *testing.T) {
	if _, err := GitHash(brokenVersions{}); err == nil || !strings.Contains(err.Error(), "nrt_get_version: libnrt is not loaded") {
		t.Errorf("%v", err)
	}
}

// The single-vNC gate: a process whose nrt_get_total_vnc_count() is non-zero
// opens no socket at all, so a root address nobody listens on is no error.
func TestSingleVNCGateMakesTheBootstrapANoOp(t *testing.T) {
	dead := netip.MustParseAddrPort("127.0.0.1:1") // nothing listens on port 1
	gated := NewNet(Config{Timeout: 300 * time.Millisecond, IfName: "lo", VNC: FixedVNC(1), Logger: quietLog})
	e, err := gated.InitFlat(t.Context(), dead, 0, 4, true)
	if err != nil || e != nil {
		t.Fatalf("gated InitFlat: %v, %v; want a nil endpoint and no error", e, err)
	}
	if _, err := gated.CreateRoot(t.Context(), netip.MustParseAddrPort("127.0.0.1:0"), 4, true); err == nil || !strings.Contains(err.Error(), "single-vNC") {
		t.Errorf("gated CreateRoot: %v", err)
	}
	// The same call in the distributed regime does go to the network.
	open := NewNet(Config{Timeout: 300 * time.Millisecond, IfName: "lo", Logger: quietLog})
	if _, err := open.InitFlat(t.Context(), dead, 0, 4, true); err == nil || !strings.Contains(err.Error(), "cannot connect to the root 127.0.0.1:1") {
		t.Errorf("ungated InitFlat to a dead root: %v", err)
	}
}

func TestInvalidRank(t *testing.T) {
	n := testNet(t, time.Second)
	for _, c := range [][2]int{{4, 4}, {-1, 4}, {0, 0}} {
		_, err := n.InitFlat(t.Context(), netip.MustParseAddrPort("127.0.0.1:1"), c[0], c[1], false)
		if want := cfmt.Sprintf(abi.MsgNccomInvalidRank, c[0], c[1]); err == nil || err.Error() != want {
			t.Errorf("rank %d of %d: %v, want %q", c[0], c[1], err, want)
		}
	}
}
