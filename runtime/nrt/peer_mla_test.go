package nrt

import (
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/device"
)

// nec_get_peer_mla_idx does not abort where the seed asserts
// (docs/sources.md#s000-4, extension nec-peer-mla-no-assert): a port the
// trn2 remap refuses and a port the MLA does not have answer -1, the
// callback's own "no peer", with one log line naming the callback, and the
// process goes on. The arguments come from libnccom, which takes them from
// its peers.
func TestPeerMLANoAssert(t *testing.T) {
	top, err := device.Default(DeviceABI())
	if err != nil {
		t.Fatal(err)
	}
	SetDevice(top)
	// The default topology is trn2: port 0 of MLA 1 is remapped to port 1,
	// which reaches MLA 0.
	want, _ := top.PeerMLA(0, 1, 1)
	if got := peerMLAIdx(0, 1, 0); got != want || want < 0 {
		t.Errorf("nec_get_peer_mla_idx(0, 1, 0) = %d, want %d (port 0 remapped to 1)", got, want)
	}
	for _, c := range []struct {
		mla, port int
		why       string
	}{
		{99, 0, "no MLA 99: the remap refuses"},
		{1, -1, "a negative port: the remap refuses"},
		{1, 7, "port 7 passes the remap unchanged, and MLA 1 has 4 ports"},
	} {
		before := strings.Count(logs.String(), "fn=nec_get_peer_mla_idx")
		if got := peerMLAIdx(0, c.mla, c.port); got != -1 {
			t.Errorf("nec_get_peer_mla_idx(0, %d, %d) = %d, want -1 (%s)", c.mla, c.port, got, c.why)
		}
		if n := strings.Count(logs.String(), "fn=nec_get_peer_mla_idx") - before; n != 1 {
			t.Errorf("nec_get_peer_mla_idx(0, %d, %d): %d log lines naming it, want 1 (%s)", c.mla, c.port, n, c.why)
		}
	}
}
