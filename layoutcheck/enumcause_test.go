package layoutcheck

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// An enum that grows from 4 to 8 bytes resizes and realigns the field of
// its type, grows the struct and moves what follows: one fact, the enum's,
// with the rest under it, in check and in diff alike (each fact
// once; grade.EnumSizeCause).
func TestEnumSizeIsOneFact(t *testing.T) {
	const old = "typedef enum ev { EV_A, EV_B } ev_t;\ntypedef struct s { int x; ev_t e; int y; } s_t;\n"
	const grown = "typedef enum ev { EV_A, EV_B } __attribute__((mode(DI))) ev_t;\ntypedef struct s { int x; ev_t e; int y; } s_t;\n"
	side := func(src string) (*spec.Spec, *Headers) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.h"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		h := compileHeaders(t, dir)
		s, _ := extractFragment(t, h.Object, release.ExtractOptions{Names: []string{"s_t"}})
		return s, h
	}
	before, _ := side(old)
	after, h := side(grown)
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := Check(context.Background(), []string{h.Object}, Options{Spec: base, Structs: before, StructsSrc: "old", Role: specmatch.RoleNone, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	dr := diff.Diff(before, after)
	var text bytes.Buffer
	cr.WriteText(&text)
	dr.WriteText(&text)
	if cr.Incompat != 1 || cr.Compatible != 0 || dr.Summary.Incompatible != 1 || dr.Summary.Compatible != 0 {
		t.Errorf("facts: check %d+%d, diff %d+%d; want 1 incompatible each\n%s", cr.Incompat, cr.Compatible, dr.Summary.Incompatible, dr.Summary.Compatible, text.String())
	}
	under := func(kind string, n int) {
		t.Helper()
		if n != 2 {
			t.Errorf("%s: %d consequences of s_t.e under the enum's size change, want 2 (resized, moved)\n%s", kind, n, text.String())
		}
	}
	for _, f := range cr.Findings {
		if f.Kind == "enum-size" {
			under("check", len(f.Consequences))
		}
	}
	for _, c := range dr.Changes {
		if c.Kind == diff.EnumSize {
			under("diff", len(c.Consequences))
		}
	}
	for _, fr := range cr.Files {
		for _, s := range fr.Structs {
			if s.Name == "s_t" && s.Status != StatusIncompatible {
				t.Errorf("check: s_t is %s; a struct whose field's enum grew is incompatible", s.Status)
			}
		}
	}
}
