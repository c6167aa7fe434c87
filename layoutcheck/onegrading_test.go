package layoutcheck

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// pairSides compiles the old and new C of one struct pair into shared
// objects with gcc -g, and returns the old side's spec (extracted, as
// `release new` does), the new side's spec, and the new shared object.
func pairSides(t *testing.T, oldSrc, newSrc string, names ...string) (*spec.Spec, *spec.Spec, string) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	build := func(src string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "pair.c"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		so := filepath.Join(dir, "libpair.so")
		if err := cc.Shared(dir, so, "libpair.so", "", []string{"pair.c"}, "-fno-eliminate-unused-debug-types"); err != nil {
			t.Fatal(err)
		}
		return so
	}
	frag := func(so string) *spec.Spec {
		s, _ := extractFragment(t, so, release.ExtractOptions{Names: names, SkipAbsent: true})
		return s
	}
	newSO := build(newSrc)
	return frag(build(oldSrc)), frag(newSO), newSO
}

// TestOneGrading: the same pairs of layouts fed to check
// (a gcc -g shared object against the old side's spec) and to diff (the
// old side's spec against the new side's) get the same grade for every
// fact. A grade is the exit bit: "none" for no finding or an informational
// one (a spec side sees an anonymous union only as a range over its bytes,
// so it cannot say more than that the bytes are kept).
func TestOneGrading(t *testing.T) {
	const head = "#include <stdint.h>\nstruct peer_ctx; struct ring_ctx;\n"
	for _, tc := range []struct {
		name     string
		old, new string
		want     map[string]string // path -> grade (both sides)
	}{
		{"void pointer to an opaque pointee", "struct s { uint64_t a; void *p; };", "struct s { uint64_t a; struct ring_ctx *p; };",
			map[string]string{"s.p": "compatible"}},
		{"opaque pointee to another", "struct s { uint64_t a; struct peer_ctx *p; };", "struct s { uint64_t a; struct ring_ctx *p; };",
			map[string]string{"s.p": "compatible"}},
		{"member laid over a field", "struct s { uint32_t a; uint32_t id; uint64_t b; };", "struct s { uint32_t a; float ring; uint64_t b; };",
			map[string]string{"s.id": "incompatible", "s.ring": "incompatible"}},
		{"member added in padding", "struct s { uint32_t a; uint64_t b; };", "struct s { uint32_t a; uint32_t pad_use; uint64_t b; };",
			map[string]string{"s.pad_use": "compatible"}},
		{"renamed type, identical layout", "struct cfg { uint32_t x; uint32_t y; }; struct s { struct cfg c; };", "struct config { uint32_t x; uint32_t y; }; struct s { struct config c; };",
			map[string]string{"s.c": "compatible"}},
		{"renamed type, another layout", "struct cfg { uint32_t x; uint32_t y; }; struct s { struct cfg c; };", "struct config { uint32_t x; float y; }; struct s { struct config c; };",
			map[string]string{"s.c": "incompatible"}},
		{"flexible array element", "struct s { uint32_t n; uint8_t t[]; };", "struct s { uint32_t n; char t[]; };",
			map[string]string{"s.t": "compatible"}},
		{"flexible array that realigns", "struct s { uint8_t n[4]; uint8_t t[]; };", "struct s { uint8_t n[4]; uint32_t t[]; };",
			map[string]string{"s.t": "incompatible"}},
		{"bitfield", "struct s { uint32_t a; uint32_t b; };", "struct s { uint32_t a; uint32_t b : 20; uint32_t c : 12; };",
			map[string]string{"s.b": "incompatible"}},
		{"anonymous-union wrap keeping the member", "struct s { uint32_t a; uint32_t b; };", "struct s { uint32_t a; union { uint32_t b; uint32_t b2; }; };",
			map[string]string{"s.b": "none"}},
		{"retyped to a type a spec cannot spell", "struct s { uint32_t a; uint32_t b; };", "struct s { uint32_t a; float b; };",
			map[string]string{"s.b": "incompatible"}},
		{"resized", "struct s { uint32_t a; uint32_t b; };", "struct s { uint32_t a; uint16_t b; };",
			map[string]string{"s.b": "incompatible"}},
		{"renamed", "struct s { uint32_t a; uint32_t b; };", "struct s { uint32_t a; uint32_t bee; };",
			map[string]string{"s.b": "compatible"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, new, so := pairSides(t, head+tc.old+"\nstruct s s_;\n", head+tc.new+"\nstruct s s_;\n", "s")
			base, err := compiled.Load(spec.Default)
			if err != nil {
				t.Fatal(err)
			}
			cr, err := Check(context.Background(), []string{so}, Options{Spec: base, Structs: old, StructsSrc: "old", Role: specmatch.RoleNone, DebugDirs: []string{t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			dr := diff.Diff(old, new)
			var rules map[string][]string
			grades := func(fs []fact) map[string]string {
				rules = map[string][]string{}
				out := map[string]string{}
				for _, f := range fs {
					if f.grade == "struct-added" || f.grade == "struct-removed" {
						continue // the renamed type's own rows: what a spec side describes, not a layout fact
					}
					g := f.severity
					if g == "info" {
						g = "none"
					}
					out[f.path] = g
					rules[f.path] = append(rules[f.path], f.grade)
				}
				return out
			}
			cg := grades(checkFacts(cr))
			cr2 := rules
			dg := grades(diffFacts(dr))
			// Graded facts are graded by the same rule too.
			for p, w := range tc.want {
				if w != "none" && strings.Join(cr2[p], ",") != strings.Join(rules[p], ",") {
					t.Errorf("%s: check's rule %v, diff's %v", p, cr2[p], rules[p])
				}
			}
			for p, w := range tc.want {
				c, d := cg[p], dg[p]
				if c == "" {
					c = "none"
				}
				if d == "" {
					d = "none"
				}
				if c != w || d != w {
					var b bytes.Buffer
					cr.WriteText(&b)
					dr.WriteText(&b)
					t.Errorf("%s: check grades %s, diff %s; want %s\n%s", p, c, d, w, b.String())
				}
			}
			var extra []string
			for p := range cg {
				if _, ok := tc.want[p]; !ok {
					extra = append(extra, "check "+p+" "+cg[p])
				}
			}
			for p := range dg {
				if _, ok := tc.want[p]; !ok {
					extra = append(extra, "diff "+p+" "+dg[p])
				}
			}
			sort.Strings(extra)
			if len(extra) > 0 {
				t.Errorf("facts beyond the pair's: %s", strings.Join(extra, "; "))
			}
		})
	}
}
