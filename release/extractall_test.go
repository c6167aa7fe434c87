package release

import (
	"fmt"
	"io"
	"os"
	"testing"
)

// BenchmarkExtractAll is extract --all of $NRTABI_BENCH_INPUT (a large
// object: bench/layoutcheck's synthetic one, libstdc++'s debug file) at
// -j 1 and -j 2, reported in MiB of .debug_info per second. Without the
// variable it is skipped, saying so: release's tests build no large input.
func BenchmarkExtractAll(b *testing.B) {
	in := os.Getenv("NRTABI_BENCH_INPUT")
	if in == "" {
		b.Skip("skipping: set NRTABI_BENCH_INPUT to a large object with DWARF (readers/elfread's BenchmarkScanAll builds its own)")
	}
	for _, j := range []int{1, 2} {
		b.Run(fmt.Sprintf("j%d", j), func(b *testing.B) {
			var st ExtractStats
			for b.Loop() {
				if err := Extract(in, io.Discard, ExtractOptions{All: true, Jobs: j, Stats: &st}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(st.InfoBytes)
			// The serial step's share bounds the speed-up (Amdahl).
			b.ReportMetric(st.ScanTime.Seconds(), "scan-s")
			b.ReportMetric(st.NameTime.Seconds(), "name-s")
			b.ReportMetric(st.ReadTime.Seconds(), "read-s")
		})
	}
}
