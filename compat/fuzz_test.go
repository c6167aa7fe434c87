package compat_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// FuzzPredict: any bytes as all three files (the probe decoder, the table
// strings and the release-name read are compat's own parsing) give a report
// or an error, never a panic or a hang.
func FuzzPredict(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	if b, err := os.ReadFile("/bin/true"); err == nil && len(b) < 1<<20 {
		f.Add(b)
	}
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		f.Fatal(err)
	}
	set := compat.NewSet([]*spec.Spec{sp})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "lib.so")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := compat.Predict(t.Context(), set, p, p, p, compat.Options{})
		if err == nil && r.Verdict == "" {
			t.Fatal("a report without a verdict")
		}
	})
}
