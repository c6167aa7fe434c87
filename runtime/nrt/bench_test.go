package nrt

import "testing"

// (d) of the boundary benchmark: a Go caller through cgo into the guarded
// trampoline (and the hot path), against the forward-only double. bench/
// boundary.sh sets these beside the C measurements of the same calls.

func BenchmarkGuardedCgo(b *testing.B) {
	initGood(b)
	for b.Loop() {
		if err := StopNetworkProxy(nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHotCgo(b *testing.B) {
	initGood(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := NetworkProxyProgress(nil, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}
