package layoutcheck

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The old side of the grading tests: a histogram config embedded in a
// holder (and pointed to), a flexible byte tail, and a byte-aligned struct
// with a flexible tail.
const gradingOld = `#include <stdint.h>
typedef struct hist_cfg { uint32_t buckets; uint32_t flags; uint64_t base; } hist_cfg_t;
typedef struct holder { uint64_t id; hist_cfg_t cfg; hist_cfg_t pair[2]; hist_cfg_t *next_cfg; uint8_t tail[]; } holder_t;
typedef struct bytes_only { uint8_t tag[8]; uint8_t tail[]; } bytes_only_t;
`

// compileTypes compiles C source to an object keeping every type's DWARF.
func compileTypes(t *testing.T, src string) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := writeFile(dir, "types.c", src); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "types.c", "types.o", "-fno-eliminate-unused-debug-types"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "types.o")
}

// fragmentOf extracts the named structs of obj as a loaded spec fragment.
func fragmentOf(t *testing.T, obj string, names ...string) *spec.Spec {
	t.Helper()
	s, _ := extractFragment(t, obj, release.ExtractOptions{Names: names})
	return s
}

// extractFragment runs extract on obj as `nrtabi extract` does (no debug
// directory unless opt names one) and loads the fragment it writes, which
// must validate; it returns the fragment and its text.
func extractFragment(t *testing.T, obj string, opt release.ExtractOptions) (*spec.Spec, string) {
	t.Helper()
	if opt.DebugDirs == nil {
		opt.DebugDirs = []string{t.TempDir()}
	}
	var b bytes.Buffer
	if err := release.Extract(obj, &b, opt); err != nil {
		t.Fatalf("extract %s: %v", obj, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatalf("the fragment extracted from %s does not validate: %v\n%s", obj, err, b.String())
	}
	return s, b.String()
}

func gradingCheck(t *testing.T, frag *spec.Spec, obj string) *Report {
	t.Helper()
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), []string{obj}, Options{Spec: base, Structs: frag, StructsSrc: "fragment", Role: specmatch.RoleNone, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// only fails unless every finding of r is of one of the kinds given.
func only(t *testing.T, r *Report, kinds ...string) {
	t.Helper()
	for _, f := range r.Findings {
		if !contains(kinds, f.Kind) {
			t.Errorf("unexpected finding %s/%s: %s", f.Kind, f.Severity, f.Message)
		}
	}
}

func TestGradedByLayout(t *testing.T) {
	frag := fragmentOf(t, compileTypes(t, gradingOld), "holder_t", "bytes_only_t")
	if r := gradingCheck(t, frag, compileTypes(t, gradingOld)); r.Exit != 0 {
		t.Fatalf("the old side against itself: exit %d %+v", r.Exit, r.Findings)
	}
	renamed := strings.NewReplacer("hist_cfg", "histogram_config")
	t.Run("rename with an identical layout is compatible", func(t *testing.T) {
		r := gradingCheck(t, frag, compileTypes(t, renamed.Replace(gradingOld)))
		expect(t, r, KindTypeRenamed, Compatible, "holder_t.cfg: type renamed hist_cfg_t -> histogram_config_t")
		expect(t, r, KindTypeRenamed, Compatible, "holder_t.pair: type renamed hist_cfg_t[2] -> histogram_config_t [2]")
		expect(t, r, KindTypeRenamed, Compatible, "holder_t.next_cfg: type renamed hist_cfg_t* -> histogram_config_t * (the pointee's layout is identical)")
		only(t, r, KindTypeRenamed)
		if r.Exit != int(Compatible) {
			t.Errorf("exit %d, want %d", r.Exit, Compatible)
		}
	})
	t.Run("rename with a changed layout stays incompatible", func(t *testing.T) {
		// Same size, same alignment, but flags is now 2 bytes.
		src := renamed.Replace(strings.Replace(gradingOld, "uint32_t flags;", "uint16_t flags; uint16_t spare;", 1))
		r := gradingCheck(t, frag, compileTypes(t, src))
		expect(t, r, KindType, Incompatible, "holder_t.cfg: type histogram_config_t, spec hist_cfg_t (field retyped)")
		expect(t, r, KindType, Incompatible, "holder_t.pair: type histogram_config_t [2], spec hist_cfg_t[2] (field retyped)")
		expect(t, r, KindType, Incompatible, "holder_t.next_cfg: type histogram_config_t *, spec hist_cfg_t* (field retyped)")
		for _, f := range r.Findings {
			if f.Kind == KindTypeRenamed {
				t.Errorf("graded as a rename: %s", f.Message)
			}
		}
	})
	t.Run("rename with a member more stays incompatible", func(t *testing.T) {
		// The new member fills the tail padding: size and offsets unchanged.
		src := strings.Replace(gradingOld, "uint32_t flags; uint64_t base; } hist_cfg_t;", "uint16_t flags; uint16_t more; uint64_t base; } hist_cfg_t;", 1)
		r := gradingCheck(t, frag, compileTypes(t, renamed.Replace(src)))
		expect(t, r, KindType, Incompatible, "holder_t.cfg: type histogram_config_t, spec hist_cfg_t (field retyped)")
	})
	t.Run("flexible array element with the same alignment is compatible", func(t *testing.T) {
		src := strings.Replace(gradingOld, "hist_cfg_t *next_cfg; uint8_t tail[];", "hist_cfg_t *next_cfg; uint32_t tail[];", 1)
		r := gradingCheck(t, frag, compileTypes(t, src))
		expect(t, r, KindFlexElem, Compatible, "holder_t.tail: flexible array of uint32_t, spec u8 (same offset 64; the struct's size and 8-byte alignment are unchanged)")
		only(t, r, KindFlexElem)
	})
	t.Run("flexible array element that changes the alignment stays incompatible", func(t *testing.T) {
		src := strings.Replace(gradingOld, "uint8_t tag[8]; uint8_t tail[];", "uint8_t tag[8]; uint64_t tail[];", 1)
		r := gradingCheck(t, frag, compileTypes(t, src))
		expect(t, r, KindType, Incompatible, "bytes_only_t.tail: type uint64_t [], spec u8[] (field retyped; the flexible array changes the struct's alignment from 1 to 8 bytes)")
		only(t, r, KindType)
	})
	t.Run("a fixed array is not a flexible one", func(t *testing.T) {
		src := strings.Replace(gradingOld, "uint8_t tag[8]; uint8_t tail[];", "uint8_t tag[8]; uint8_t tail[0];", 1)
		src = strings.Replace(src, "uint8_t tag[8]", "int8_t tag[8]", 1)
		r := gradingCheck(t, frag, compileTypes(t, src))
		expect(t, r, KindType, Incompatible, "bytes_only_t.tag: type int8_t [8], spec u8[8] (field retyped)")
	})
}

// A self-referential struct renamed with an identical layout: the
// comparison ends (cycle-safe) and grades it a rename.
func TestGradedRenameSelfReference(t *testing.T) {
	old := "struct node { struct node *next; long v; };\nstruct list { struct node head; };\n"
	frag := fragmentOf(t, compileTypes(t, old), "list")
	r := gradingCheck(t, frag, compileTypes(t, strings.ReplaceAll(old, "node", "elem")))
	expect(t, r, KindTypeRenamed, Compatible, "list.head: type renamed node -> struct elem")
}
