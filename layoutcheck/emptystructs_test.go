package layoutcheck

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

// loadFragment writes an extracted fragment and loads it as the loader
// would; a fragment the loader refuses fails the test.
func loadFragment(t *testing.T, text string) *spec.Spec {
	t.Helper()
	s, _ := loadFragmentDir(t, text)
	return s
}

// loadFragmentDir is loadFragment, and the spec directory it wrote (one
// structs.toml).
func loadFragmentDir(t *testing.T, text string) (*spec.Spec, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatalf("extract wrote a fragment its loader refuses: %v\n%s", err, text)
	}
	return s, dir
}

const emptyC = `struct e0 {};
struct ok { int a; struct e0 z; double tail0[]; };
struct flex { long a; char b; short t[]; };
struct e0 ge;
struct ok gok;
struct flex gflex;
`

// A struct without DW_AT_byte_size, as rustc writes for a trait object's
// vtable: gcc's assembly with the attribute renamed in the abbreviation of
// the one struct whose name is an inline string.
const sizelessC = `struct vt { void *drop; unsigned long size; };
struct a_normal_struct_with_long_name { struct vt *v; int x; };
struct vt gvt; struct a_normal_struct_with_long_name gn;
`

// TestExtractNeverWritesRefused (C): a GNU C empty struct (0 bytes) and a
// struct without a size are refused one by one with a one-line error naming
// them, the other structs are written and load, and check of the object
// against them is clean. A zero-size member (the empty struct, a flexible
// array of doubles) takes no range; a flexible array in the tail padding is
// a field.
func TestExtractNeverWritesRefused(t *testing.T) {
	obj := compileTypes(t, emptyC)
	var b bytes.Buffer
	err := release.Extract(obj, &b, release.ExtractOptions{Names: []string{"ok", "e0", "flex"}, DebugDirs: []string{t.TempDir()}})
	var refused *release.RefusedError
	if !errors.As(err, &refused) || len(refused.Refused) != 1 || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "e0 (struct e0 is empty (0 bytes") {
		t.Fatalf("want e0 refused in one line, got %v", err)
	}
	frag := loadFragment(t, b.String())
	if frag.StructByName("e0") != nil || frag.StructByName("ok") == nil || !strings.Contains(b.String(), "# not extracted: e0 (") {
		t.Fatalf("refused structs must be left out (and named), the others written:\n%s", b.String())
	}
	if fl := frag.StructByName("flex"); fl == nil || len(fl.Fields) != 3 || fl.Fields[2].Offset != 10 || fl.Size != 16 {
		t.Fatalf("flex.t sits at 10 in a 16-byte struct, as a field:\n%s", b.String())
	}
	if r := gradingCheck(t, frag, obj); len(r.Findings) != 0 {
		t.Fatalf("check against the written fragment is not clean: %+v", r.Findings)
	}
	// Only refused structs asked for: an error, nothing written.
	b.Reset()
	if err := release.Extract(obj, &b, release.ExtractOptions{Names: []string{"e0"}, DebugDirs: []string{t.TempDir()}}); err == nil || errors.As(err, &refused) || b.Len() != 0 {
		t.Fatalf("want a plain error and no output, got %v and %d bytes", err, b.Len())
	}

	dir := t.TempDir()
	if err := writeFile(dir, "vt.c", sizelessC); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-g", "-S", "-dA", "-o", "vt.s", "vt.c"); err != nil {
		t.Fatal(err)
	}
	asm, err := os.ReadFile(filepath.Join(dir, "vt.s"))
	if err != nil {
		t.Fatal(err)
	}
	const abbrev = "(DW_FORM_string)\n\t.uleb128 0xb\t# (DW_AT_byte_size)"
	if strings.Count(string(asm), abbrev) != 1 {
		t.Skipf("skipping the sizeless case: this gcc's assembly has %d struct abbreviations of the expected shape, not 1", strings.Count(string(asm), abbrev))
	}
	patched := strings.Replace(string(asm), abbrev, "(DW_FORM_string)\n\t.uleb128 0x9\t# (DW_AT_ordering)", 1)
	if err := writeFile(dir, "vt2.s", patched); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-c", "-o", "vt.o", "vt2.s"); err != nil {
		t.Fatal(err)
	}
	vt := filepath.Join(dir, "vt.o")
	b.Reset()
	err = release.Extract(vt, &b, release.ExtractOptions{Names: []string{"vt", "a_normal_struct_with_long_name"}, DebugDirs: []string{t.TempDir()}})
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "vt (struct vt has no size in this DWARF") {
		t.Fatalf("want vt refused, got %v", err)
	}
	frag = loadFragment(t, b.String())
	if st := frag.StructByName("a_normal_struct_with_long_name"); st == nil || st.Fields[0].Type != "vt*" {
		t.Fatalf("the struct pointing to vt is written with vt as an opaque type:\n%s", b.String())
	}
	if r := gradingCheck(t, frag, vt); len(r.Findings) != 0 {
		t.Fatalf("check against the written fragment is not clean: %+v", r.Findings)
	}
}

const emptyCxx = `struct E {};
struct S { static int n; };
int S::n;
struct D : E { int x; };
struct H { E e; int y; };
E ge; S gs; D gd; H gh;
`

// TestExtractEmptyClasses (C++): classes without data members take one
// byte: extracted as one opaque range, which loads and checks clean.
func TestExtractEmptyClasses(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	dir := t.TempDir()
	if err := writeFile(dir, "e.cc", emptyCxx); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "e.cc", "e.o"); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "e.o")
	var b bytes.Buffer
	if err := release.Extract(obj, &b, release.ExtractOptions{Names: []string{"E", "S", "D", "H"}, DebugDirs: []string{t.TempDir()}}); err != nil {
		t.Fatal(err)
	}
	frag := loadFragment(t, b.String())
	for _, n := range []string{"E", "S"} {
		st := frag.StructByName(n)
		if st == nil || st.Size != 1 || len(st.Opaque) != 1 || st.Opaque[0].Size != 1 {
			t.Fatalf("%s: want one opaque byte:\n%s", n, b.String())
		}
	}
	if r := gradingCheck(t, frag, obj); len(r.Findings) != 0 {
		t.Fatalf("check against the written fragment is not clean: %+v", r.Findings)
	}
}
