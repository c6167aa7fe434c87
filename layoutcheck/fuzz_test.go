package layoutcheck

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// FuzzReadObject feeds mutated real objects (gcc -g, DWARF 4 and 5, a
// compressed one, a shared object; testdata/fuzz/seed.c is their source,
// plus the crafted cyclic ones) to check, show and extract. Each must end
// with a result or a one-line *InputError; a panic fails the fuzz run.
func FuzzReadObject(f *testing.F) {
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		f.Fatal(err)
	}
	dir := hostile.FuzzDir(f)
	noDebug := []string{filepath.Join(dir, "no-debug-dir")}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "input.o")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		InputErrorf := func(what string, err error) {
			t.Helper()
			if err == nil {
				return
			}
			var ie *elfread.InputError
			if !errors.As(err, &ie) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s: want nil or a one-line *InputError, got %T %q", what, err, err)
			}
		}
		_, err := Check(context.Background(), []string{p}, Options{Spec: sp, DebugDirs: noDebug})
		InputErrorf("check", err)
		var out bytes.Buffer
		_, err = Show(context.Background(), p, hostile.StructName, ShowOptions{Spec: sp, DebugDirs: noDebug}, &out)
		InputErrorf("show", err)
		if out.Len() > 1<<20 {
			t.Fatalf("show printed %d bytes for a %d-byte input", out.Len(), len(data))
		}
		out.Reset()
		err = release.Extract(p, &out, release.ExtractOptions{Names: []string{hostile.StructName, "outer", "inner"}, SkipAbsent: true, Spec: sp, DebugDirs: noDebug})
		// A struct the spec cannot hold (empty, sizeless) is refused by name
		// while the others are written: a verdict, not a failure to read.
		var refused *release.RefusedError
		if errors.As(err, &refused) {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("extract: a refusal over several lines: %q", err)
			}
		} else if err != nil && !strings.Contains(err.Error(), "cannot be extracted") {
			InputErrorf("extract", err)
		}
	})
}
