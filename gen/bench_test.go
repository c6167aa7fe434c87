package gen

import (
	"testing"

	"github.com/nrtabi/nrtabi/spec"
)

// BenchmarkRegenerate measures what `make generate` does per release, minus
// process start-up: load and validate the embedded spec, render every artefact.
func BenchmarkRegenerate(b *testing.B) {
	lines := 0
	for i := 0; i < b.N; i++ {
		s, err := spec.Load(spec.Default)
		if err != nil {
			b.Fatal(err)
		}
		files, err := Generate(s)
		if err != nil {
			b.Fatal(err)
		}
		lines = 0
		for _, f := range files {
			for _, c := range f.Data {
				if c == '\n' {
					lines++
				}
			}
		}
	}
	b.ReportMetric(float64(lines), "lines")
}
