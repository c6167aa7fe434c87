package layoutcheck

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// versionBare is nrt_version_t as a vendor header may write it: uint64_t
// without <stdint.h>, static_assert without <assert.h>.
const versionBare = "typedef struct nrt_version { uint64_t rt_major, rt_minor, rt_patch, rt_maintenance; char rt_detail[128]; char git_hash[64]; } nrt_version_t;\nstatic_assert(sizeof(nrt_version_t) == 224, \"nrt_version_t\");\n"

// TestHeadersPrelude: a header that relies on the C standard headers the
// code including it always has compiles after the prelude, which the
// Headers record; without the prelude (the code before it) the same tree
// is an error naming the header, the spec struct, gcc's first error and a
// fix in flags the commands take.
func TestHeadersPrelude(t *testing.T) {
	sp := defaultSpec(t)
	dir := writeTree(t, map[string]string{"nrt/nrt_version.h": versionBare, "nrt/ring.h": innocentSize})
	h, err := compileWith(t, dir, HeaderOptions{Spec: sp})
	if err != nil {
		t.Fatalf("with the prelude: %v", err)
	}
	if !slices.Equal(h.Prelude, Prelude) || len(h.Warnings) != 0 {
		t.Errorf("prelude %q, warnings %q", h.Prelude, h.Warnings)
	}
	_, err = compileWith(t, dir, HeaderOptions{Spec: sp, NoPrelude: true})
	for _, want := range []string{"nrt/nrt_version.h: declares the spec struct nrt_version_t but does not compile on its own", "unknown type name", "uint64_t", "-I DIR", "--cflags '-include FILE'"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("without the prelude: %v, want %q", err, want)
		}
	}
}

// TestHeadersOrder: a header using a type another header of the tree
// defines, without including it, is compiled after that header, with a
// note, and the order is recorded; a type no header of the tree defines is
// the header's error, and --cflags '-include FILE' of a vendor file in an
// -I directory is the fix the error names.
func TestHeadersOrder(t *testing.T) {
	sp := defaultSpec(t)
	user := "typedef struct nrt_instance_info { uint32_t family; uint32_t size; thing_t thing; } nrt_instance_info_t;\n"
	dir := writeTree(t, map[string]string{"nrt/a_user.h": user, "nrt/z_types.h": "typedef uint64_t thing_t;\n"})
	h, err := compileWith(t, dir, HeaderOptions{Spec: sp})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Order, []string{"nrt/z_types.h", "nrt/a_user.h"}) {
		t.Errorf("order %q", h.Order)
	}
	if len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "nrt/a_user.h uses thing_t, which nrt/z_types.h defines, without including it: compiled after nrt/z_types.h") {
		t.Errorf("notes %q", h.Notes)
	}
	r, err := Check(context.Background(), []string{h.Object}, Options{Spec: sp})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 1 || len(r.Files[0].Structs) != 1 || r.Files[0].Structs[0].Name != "nrt_instance_info_t" {
		t.Errorf("the reordered header's struct was not read: %+v", r.Files)
	}

	// The type is a vendor file's the tree does not ship.
	alone := writeTree(t, map[string]string{"nrt/a_user.h": user})
	_, err = compileWith(t, alone, HeaderOptions{Spec: sp})
	if err == nil || !strings.Contains(err.Error(), "unknown type name ‘thing_t’") || !strings.Contains(err.Error(), "--cflags '-include FILE'") {
		t.Fatalf("a type no header defines: %v", err)
	}
	vendor := writeTree(t, map[string]string{"drv/thing.h": "typedef unsigned long long thing_t;\n"})
	h, err = compileWith(t, alone, HeaderOptions{Spec: sp, IncludeDirs: []string{vendor}, CFlags: []string{"-include", "drv/thing.h"}})
	if err != nil || len(h.Warnings) != 0 {
		t.Fatalf("with -I and --cflags '-include drv/thing.h': %v %q", err, h.Warnings)
	}
	if !slices.Equal(h.CFlags, []string{"-include", "drv/thing.h"}) || len(h.IncludeDirs) != 1 {
		t.Errorf("recorded cflags %q, include dirs %q", h.CFlags, h.IncludeDirs)
	}
}

// TestHeadersNameApostrophe: a header named with an apostrophe (C includes
// it as any byte of a path) is read; one whose name holds a newline and C
// text is refused by name before any compiler runs, and nothing of the
// name is compiled (the hostile corpus, internal/hostile, holds more).
func TestHeadersNameApostrophe(t *testing.T) {
	sp := defaultSpec(t)
	dir := writeTree(t, map[string]string{"nrt/it's.h": goodVersion, "nrt/a /*b.h": "struct odd_name { int a; };\n"})
	h, err := compileWith(t, dir, HeaderOptions{Spec: sp})
	if err != nil {
		t.Fatalf("an apostrophe in a header's name: %v", err)
	}
	if !slices.Contains(h.Roots, "nrt/it's.h") {
		t.Errorf("roots %q", h.Roots)
	}
	bad := writeTree(t, map[string]string{"x\"\nstruct nrt_version { int forged; };\n#define Z .h": "\n", "ok.h": goodVersion})
	_, err = compileWith(t, bad, HeaderOptions{Spec: sp})
	if err == nil || !strings.Contains(err.Error(), "cannot be #included by name") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a name holding a newline and C: %v", err)
	}
}

// TestCheckCFlags: preprocessor and layout flags are taken; a flag that
// would run another program, write elsewhere or read options from a file
// is refused by name, as is a flag missing its value.
func TestCheckCFlags(t *testing.T) {
	for _, ok := range [][]string{{"-DX=1", "-UY", "-std=c11"}, {"-include", "a.h", "-I", "inc", "-fshort-enums", "-fpack-struct=4"}} {
		if err := CheckCFlags(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"-fplugin=x.so"}, {"-o", "x"}, {"@opts"}, {"-B/tmp"}, {"-wrapper", "sh"}, {"-include"}, {"-specs=x"}} {
		if err := CheckCFlags(bad); err == nil || !strings.Contains(err.Error(), "--cflags") {
			t.Errorf("%q: %v, want a refusal naming --cflags", bad, err)
		}
	}
	if _, err := compileWith(t, writeTree(t, map[string]string{"a.h": "struct a { int x; };\n"}), HeaderOptions{CFlags: []string{"-fplugin=" + filepath.Join(t.TempDir(), "p.so")}}); err == nil {
		t.Error("a plugin flag was given to the compiler")
	}
}
