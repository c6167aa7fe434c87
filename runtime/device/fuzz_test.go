package device

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseTopology: any file either loads into a topology every query can
// be asked of, or fails with one *Error line naming the file; never a panic.
// The seed corpus is testdata/fuzz/FuzzParseTopology (the default topology
// and edits of it); `make test` runs it, `go test -fuzz` explores from it.
func FuzzParseTopology(f *testing.F) {
	f.Add(defaultTOML)
	f.Fuzz(func(t *testing.T, src []byte) {
		top, err := ParseTopology("fuzz.toml", src, testABI)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error %T %q is not one *Error line naming the file", err, err)
			}
			return
		}
		queryAll(t, top)
	})
}

// queryAll asks a loaded topology everything the callbacks may ask, with
// in-range and out-of-range arguments.
func queryAll(t *testing.T, top *Topology) {
	for v := uint32(0); v <= top.TotalVNCCount(); v++ {
		_, _ = top.CoreIdentity(v)
	}
	_ = top.Devices()
	_, _ = top.VirtualCoreSize()
	_ = top.Instance()
	for _, m := range top.mlas {
		for port := -1; port <= len(m.peers); port++ {
			_, _ = top.Port(m.id, port)
			for _, d := range top.devices {
				_, _ = top.PeerMLA(d.id, m.id, port)
			}
		}
		for _, d := range top.devices {
			_ = top.MLAAvailable(d.id, m.id)
			_, _ = top.MLAToRID(d.id, m.id)
			_, _ = top.RIDToMLA(d.id, m.rid)
		}
	}
	for _, d := range top.devices {
		_, _ = top.PCIBDF(d.id)
		if _, err := top.PortMap(d.id); err != nil {
			t.Fatalf("PortMap of device %d, which the file describes: %v", d.id, err)
		}
		for node := -1; node <= int(min(top.podSize, 4)); node++ {
			_, _ = top.P2PPodPeerNode(uint32(d.id), node, 1)
		}
	}
	for _, pt := range testABI.PodTypes {
		for a := uint32(0); a < min(top.podSize, 4)+1; a++ {
			for b := uint32(0); b < min(top.podSize, 4)+1; b++ {
				ab, e1 := top.PodNodeCanAccess(pt, 0, a, 0, b)
				ba, e2 := top.PodNodeCanAccess(pt, 0, b, 0, a)
				if ab != ba || (e1 == nil) != (e2 == nil) {
					t.Fatalf("pod type %d: %d->%d = %v, %d->%d = %v", pt, a, b, ab, b, a, ba)
				}
			}
		}
	}
}
