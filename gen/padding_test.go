package gen

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

// gapMember is a field (typ set) or an opaque range (typ "") of a gapShape.
type gapMember struct {
	name string
	typ  string
	off  int
	size int
}

// gapShape is a struct whose natural C and Go layout puts a member short of
// its spec offset: the generator must pad explicitly.
type gapShape struct {
	name    string
	size    int
	align   int
	packed  bool
	why     string
	members []gapMember
}

func opaqueAt(off, size int) gapMember { return gapMember{off: off, size: size} }

// gapShapes are the shapes of the class: an opaque range standing for a
// member of larger alignment than its bytes, after a narrower field,
// after another range, at the start, at the very end, and in a packed image.
// (A field the natural layout does not put at its spec offset is a spec
// that contradicts C, refused by the header's assertions:
// TestMutationBites.)
var gapShapes = []gapShape{
	{name: "gap_u32_t", size: 16, align: 8, why: "u32 at 0, an 8-aligned union held as the range 8..16",
		members: []gapMember{{"kind", "u32", 0, 4}, opaqueAt(8, 8)}},
	{name: "gap_u32_wide_t", size: 24, align: 8, why: "u32 at 0, the range 8..24",
		members: []gapMember{{"kind", "u32", 0, 4}, opaqueAt(8, 16)}},
	{name: "gap_u8_t", size: 8, align: 4, why: "u8 at 0, the range 4..6, then a u16 at 6",
		members: []gapMember{{"tag", "u8", 0, 1}, opaqueAt(4, 2), {"port", "u16", 6, 2}}},
	{name: "gap_after_field_t", size: 16, align: 4, why: "a u16 ending at 6, the range 12..16",
		members: []gapMember{{"id", "u32", 0, 4}, {"flags", "u16", 4, 2}, opaqueAt(12, 4)}},
	{name: "gap_two_ranges_t", size: 24, align: 8, why: "the ranges 0..4 and 8..16 with a gap between, then a u64",
		members: []gapMember{opaqueAt(0, 4), opaqueAt(8, 8), {"epoch", "u64", 16, 8}}},
	{name: "gap_tail_t", size: 16, align: 8, why: "a u8 ending at 9, the range 12..16 at the very end",
		members: []gapMember{{"base", "u64", 0, 8}, {"mode", "u8", 8, 1}, opaqueAt(12, 4)}},
	{name: "gap_packed_t", size: 12, packed: true, why: "a packed image: u8 at 0, the range 4..8, a u32 at 8",
		members: []gapMember{{"op", "u8", 0, 1}, opaqueAt(4, 4), {"len", "u32", 8, 4}}},
	{name: "gap_lead_t", size: 8, align: 8, why: "the range 4..8 alone; no member at a multiple of 8 to carry the alignment",
		members: []gapMember{opaqueAt(4, 4)}},
	{name: "gap_wide_t", size: 80, align: 8, why: "a 69-byte gap (1..70) before the range 70..72",
		members: []gapMember{{"tag", "u8", 0, 1}, opaqueAt(70, 2), {"next", "void*", 72, 8}}},
}

func (g gapShape) toml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n# %s\n[[struct]]\nname = %q\nsize = %d\n", g.why, g.name, g.size)
	if g.align > 0 {
		fmt.Fprintf(&b, "align = %d\n", g.align)
	}
	side := "both"
	if g.packed {
		side = "wire"
		b.WriteString("packed = true\n")
	}
	fmt.Fprintf(&b, "side = %q\nconf = \"HIGH\"\nsource = \"test\"\n", side)
	for _, m := range g.members {
		if m.typ == "" {
			fmt.Fprintf(&b, "  [[struct.opaque]]\n  offset = %d\n  size = %d\n  conf = \"HIGH\"\n  source = \"test\"\n", m.off, m.size)
		} else {
			fmt.Fprintf(&b, "  [[struct.field]]\n  name = %q\n  offset = %d\n  type = %q\n  conf = \"HIGH\"\n  source = \"test\"\n", m.name, m.off, m.typ)
		}
	}
	return b.String()
}

// cName is the member's name in the generated header.
func (m gapMember) cName() string {
	if m.typ == "" {
		return fmt.Sprintf("%s%d", spec.OpaqueMemberPrefix, m.off)
	}
	return m.name
}

// loadGapSpec is the small release with the gap shapes added.
func loadGapSpec(t *testing.T) *spec.Spec {
	t.Helper()
	dir := spectest.CopyRelease(t, os.DirFS(filepath.Dir(miniDir)), filepath.Base(miniDir))
	var b strings.Builder
	for _, g := range gapShapes {
		b.WriteString(g.toml())
	}
	if err := os.WriteFile(filepath.Join(dir, "gaps.toml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatalf("the validator must accept every gap shape: %v", err)
	}
	return s
}

// TestGapsLaidOutAtSpecOffsets compiles the generated header with
// assertions of its own on every member of every gap shape (the header's
// assertions are the generator's; these are not), and requires the DWARF of
// the object to hold the spec's members and nothing else: the padding must
// not become a member the checker or the extractor would read.
func TestGapsLaidOutAtSpecOffsets(t *testing.T) {
	needCC(t)
	dir := writeRelease(t, loadGapSpec(t))
	var tu strings.Builder
	tu.WriteString("#define _GNU_SOURCE\n#include \"" + HeaderName + "\"\n")
	for i, g := range gapShapes {
		tag := "struct " + strings.TrimSuffix(g.name, "_t")
		fmt.Fprintf(&tu, "%s gap_%d;\n", tag, i)
		fmt.Fprintf(&tu, "_Static_assert(sizeof(%s) == %d, \"%s: size %d\");\n", tag, g.size, g.name, g.size)
		if g.align > 0 {
			fmt.Fprintf(&tu, "_Static_assert(_Alignof(%s) == %d, \"%s: align %d\");\n", tag, g.align, g.name, g.align)
		}
		for _, m := range g.members {
			fmt.Fprintf(&tu, "_Static_assert(offsetof(%s, %s) == %d, \"%s.%s: offset %d\");\n", tag, m.cName(), m.off, g.name, m.cName(), m.off)
		}
	}
	c := filepath.Join(dir, "c")
	if err := os.WriteFile(filepath.Join(c, "gaps.c"), []byte(tu.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(c, "gaps.c", "gaps.o", append([]string{"-g"}, cc.Strict...)...); err != nil {
		t.Fatalf("the generated header lays a gap shape out off the spec:\n%v", err)
	}
	got := dwarfMembers(t, filepath.Join(c, "gaps.o"))
	for _, g := range gapShapes {
		tag := strings.TrimSuffix(g.name, "_t")
		var want []string
		for _, m := range g.members {
			want = append(want, fmt.Sprintf("%s@%d", m.cName(), m.off))
		}
		if !slices.Equal(got[tag], want) {
			t.Errorf("%s: DWARF members %v, want the spec's %v", g.name, got[tag], want)
		}
	}
}

// dwarfMembers lists every struct's members in an object as name@offset.
func dwarfMembers(t *testing.T, obj string) map[string][]string {
	t.Helper()
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		if e.Tag != dwarf.TagStructType || !e.Children {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		for {
			m, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if m == nil || m.Tag == 0 {
				break
			}
			if m.Tag == dwarf.TagMember {
				mn, _ := m.Val(dwarf.AttrName).(string)
				off, _ := m.Val(dwarf.AttrDataMemberLoc).(int64)
				out[name] = append(out[name], fmt.Sprintf("%s@%d", mn, off))
			}
			if m.Children {
				r.SkipChildren()
			}
		}
	}
}

// TestGapsGoMirrors builds the generated Go package with a test of its own
// that finds every gap shape's fields and opaque fillers by reflection at
// their spec offsets and sizes, and runs the generated layout test, whose
// rows now include the opaque ranges.
func TestGapsGoMirrors(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds a Go module (-short)")
	}
	dir := writeRelease(t, loadGapSpec(t))
	var src strings.Builder
	src.WriteString("package abi\n\nimport (\n\t\"reflect\"\n\t\"testing\"\n)\n\n")
	src.WriteString("func TestGapPlacement(t *testing.T) {\n\tfor _, c := range []struct {\n\t\tv          any\n\t\tfield      string\n\t\toff, size uintptr\n\t}{\n")
	for _, g := range gapShapes {
		if g.packed {
			continue // a byte image: MarshalTo places its fields (TestWire*)
		}
		typ := GoName(g.name)
		fmt.Fprintf(&src, "\t\t{%s{}, \"\", 0, %d},\n", typ, g.size)
		for _, m := range g.members {
			name := "_"
			if m.typ != "" {
				name = GoName(m.name)
			}
			fmt.Fprintf(&src, "\t\t{%s{}, %q, %d, %d},\n", typ, name, m.off, m.size)
		}
	}
	src.WriteString(`	} {
		rt := reflect.TypeOf(c.v)
		if c.field == "" {
			if rt.Size() != c.size {
				t.Errorf("%s: size %d, want %d", rt.Name(), rt.Size(), c.size)
			}
			continue
		}
		found := false
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			found = found || f.Name == c.field && f.Offset == c.off && f.Type.Size() == c.size
		}
		if !found {
			t.Errorf("%s: no field %s of %d bytes at %d", rt.Name(), c.field, c.size, c.off)
		}
	}
}
`)
	if err := os.WriteFile(filepath.Join(dir, GoPackage, "gaps_test.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := buildGo(dir, NoAssertTag)
	if err != nil {
		t.Fatalf("the Go mirrors lay a gap shape out off the spec: %v\n%s", err, out)
	}
	for _, want := range []string{`--- PASS: TestGapPlacement`, `--- PASS: TestLayout`, `gap_u32_t\s+opaque 8\.\.16\s+8\s+8\s`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the generated tests did not report %q:\n%s", want, out)
		}
	}
	if out, err := buildGo(dir); err != nil {
		t.Errorf("with its compile-time assertions the package does not build: %v\n%s", err, out)
	}
}
