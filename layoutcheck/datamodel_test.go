package layoutcheck

import (
	"bytes"
	"context"
	"encoding/binary"
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

const tmLike = `struct tm_like { int tm_sec; long tm_gmtoff; const char *tm_zone; };
struct tm_like tm;
`

// setMachine rewrites e_machine (bytes 18..19 of the ELF header, both
// classes; little-endian objects) of a copy of obj.
func setMachine(t *testing.T, obj string, machine uint16) string {
	t.Helper()
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(b[18:], machine)
	out := filepath.Join(t.TempDir(), filepath.Base(obj))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDataModels: an ILP32 object (i386 from gcc -m32, and the same object
// marked ARM) gets one error naming its data model from extract, show and
// check, and no fragment; x86-64 and aarch64 (LP64) are read.
func TestDataModels(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := writeFile(dir, "tm.c", tmLike); err != nil {
		t.Fatal(err)
	}
	// A linked object: its DWARF is read as is (a relocatable one would
	// stop earlier, at relocations of a machine the reader does not apply).
	if err := cc.Shared(dir, "libtm32.so", "", "", []string{"tm.c"}, "-m32", "-nostdlib"); err != nil {
		t.Skipf("skipping the ILP32 cases: gcc -m32 cannot build here (%v); install gcc-multilib", err)
	}
	i386 := filepath.Join(dir, "libtm32.so")
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	frag := fragmentOf(t, compileTypes(t, tmLike), "tm_like")
	arm := setMachine(t, i386, 40) // EM_ARM
	for file, model := range map[string]string{i386: "ELF32 i386 object (data model ILP32)", arm: "ELF32 ARM object (data model ILP32)"} {
		var b bytes.Buffer
		err := release.Extract(file, &b, release.ExtractOptions{Names: []string{"tm_like"}, DebugDirs: []string{t.TempDir()}})
		if err == nil || !strings.Contains(err.Error(), model) || strings.Contains(err.Error(), "\n") {
			t.Errorf("extract %s: want one line naming %q, got %v", file, model, err)
		}
		if b.Len() != 0 {
			t.Errorf("extract %s wrote a fragment for an ILP32 layout:\n%s", file, b.String())
		}
		if _, err := Show(context.Background(), file, "tm_like", ShowOptions{DebugDirs: []string{t.TempDir()}}, &b); err == nil || !strings.Contains(err.Error(), model) {
			t.Errorf("show %s: want %q, got %v", file, model, err)
		}
		if _, err := Check(context.Background(), []string{file}, Options{Spec: base, Structs: frag, StructsSrc: "fragment", Role: specmatch.RoleNone, DebugDirs: []string{t.TempDir()}}); err == nil || !strings.Contains(err.Error(), model) {
			t.Errorf("check %s: want %q, got %v", file, model, err)
		}
	}
	// LP64: x86-64 as built, and a linked object marked aarch64 (the
	// layout is the same; relocations are not applied to a linked file).
	if err := cc.Shared(dir, "libtm.so", "", "", []string{"tm.c"}); err != nil {
		t.Fatal(err)
	}
	aarch64 := setMachine(t, filepath.Join(dir, "libtm.so"), 183) // EM_AARCH64
	for _, file := range []string{filepath.Join(dir, "libtm.so"), aarch64} {
		frag := fragmentOf(t, file, "tm_like")
		st := frag.StructByName("tm_like")
		if st == nil || st.Size != 24 || st.Fields[2].Offset != 16 {
			t.Errorf("%s: want tm_like of 24 bytes with tm_zone at 16, got %+v", file, st)
		}
	}
}
