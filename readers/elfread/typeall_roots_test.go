package elfread

import (
	"context"
	"debug/dwarf"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/typemodel"
)

// rootsSource has types only a function's prototype reaches (a restrict
// pointer, a typedef of a local variable) beside a struct's members.
const rootsSource = `typedef long unused_t;
struct rooted { int *p; const char *s; unsigned long n; };
int f(const char *restrict in, double *out) { unused_t v = 0; return (int)v + (in != 0) + (out != 0); }
struct rooted r;
`

// TestAllTypesDecodesWhatRootsReach: AllTypes decodes a C unit's structs
// at namespace scope and what their members reach, each once, and not
// the types only a prototype or a local reaches (rootTag,
// docs/benchmarks.md#less-fresh-memory-per-die); At still decodes one of
// those afterwards, as it decodes any DIE. Cost: one cc -c and a graph
// of a few nodes, well under a second.
func TestAllTypesDecodesWhatRootsReach(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "roots.c"), []byte(rootsSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-g", "-O0", "-c", "-o", "roots.o", "roots.c"); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "roots.o")
	want := dieOffsets(t, obj)
	for _, name := range []string{"struct rooted", "restrict pointer", "typedef unused_t", "pointer to int", "double pointer"} {
		if _, ok := want[name]; !ok {
			t.Fatalf("the compiler wrote no %s DIE: the test checks nothing", name)
		}
	}
	withDecodeCount(t)
	d := openDebugT(t, obj)
	g, err := d.AllTypes(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	dec := g.Decodes()
	for _, name := range []string{"struct rooted", "pointer to int"} {
		if dec[uint64(want[name])] != 1 {
			t.Errorf("%s (DIE %#x) decoded %d times by AllTypes, want once", name, want[name], dec[uint64(want[name])])
		}
	}
	for _, name := range []string{"restrict pointer", "typedef unused_t", "double pointer"} {
		if n := dec[uint64(want[name])]; n != 0 {
			t.Errorf("%s (DIE %#x), which no struct reaches, decoded %d times by AllTypes", name, want[name], n)
		}
	}
	rt, err := g.At(want["restrict pointer"])
	if err != nil {
		t.Fatal(err)
	}
	if rt.Kind != typemodel.Restrict || typemodel.Spell(rt) != "const char *restrict" {
		t.Errorf("At of the restrict pointer gave %v %q", rt.Kind, typemodel.Spell(rt))
	}
}

// dieOffsets finds, with the standard library's reader, the DIEs the
// test names in obj.
func dieOffsets(t *testing.T, obj string) map[string]dwarf.Offset {
	t.Helper()
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dw, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dwarf.Offset{}
	r := dw.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		switch e.Tag {
		case dwarf.TagStructType:
			out["struct "+name] = e.Offset
		case dwarf.TagTypedef:
			out["typedef "+name] = e.Offset
		case dwarf.TagRestrictType:
			out["restrict pointer"] = e.Offset
		case dwarf.TagPointerType:
			to, _ := e.Val(dwarf.AttrType).(dwarf.Offset)
			ty, err := dw.Type(to)
			if err == nil && ty.String() == "int" {
				out["pointer to int"] = e.Offset
			}
			if err == nil && ty.String() == "double" {
				out["double pointer"] = e.Offset
			}
		}
	}
	return out
}
