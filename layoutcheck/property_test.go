package layoutcheck

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

// The round-trip property: random C declarations (pointer, array,
// function-pointer and qualifier nestings up to depth 4, in structs with
// padding) compiled by gcc -g (DWARF 5 and 4) extract to a fragment that loads, checks clean
// against the same object, and whose sizes and offsets gcc itself confirms
// (a second compile of _Static_asserts). Where the grammar spells a member,
// the generator's C spelling of the spec type is the declaration written.
//
// NRTABI_PROPERTY_N sets how many structs (default 40, one compile);
// NRTABI_PROPERTY_SEED the first seed (default 17). Longer runs go 40
// structs per compile with the seed advancing by one per batch.

// cType is a generated C type: a node of the declarator tree.
type genType struct {
	kind   byte // 'b' base, 'p' pointer, 'a' array, 'f' function
	base   string
	spec   string // the spec's C spelling of a base; "" when the grammar has none
	elem   *genType
	n      int
	c, v   bool
	params []*genType
	byVal  int // index of an earlier struct embedded by value, else -1
}

type genBase struct{ c, spec string }

var genBases = []genBase{
	{"int", "int"}, {"char", "char"}, {"unsigned int", "unsigned int"}, {"short", "int16_t"},
	{"long", "int64_t"}, {"signed char", "int8_t"}, {"unsigned char", "uint8_t"}, {"_Bool", "bool"},
	{"long long", "int64_t"}, {"unsigned short", "uint16_t"}, {"double", ""},
	// Typedefs of the grammar's integers resolve to them on both sides.
	{"uint32_t", "uint32_t"}, {"int8_t", "int8_t"}, {"size_t", "size_t"}, {"uint64_t", "uint64_t"},
}

func qualText(c, v bool) string {
	s := ""
	if c {
		s += "const "
	}
	if v {
		s += "volatile "
	}
	return s
}

// decl renders the declaration independently of the code under test; with
// specForm, bases are spelled as the generator spells spec builtins.
func (t *genType) decl(name string, specForm bool) string {
	switch t.kind {
	case 'p':
		d := "*" + strings.TrimSuffix(qualText(t.c, t.v), " ")
		if name != "" {
			if d != "*" {
				d += " "
			}
			d += name
		}
		if t.elem.kind == 'a' || t.elem.kind == 'f' {
			d = "(" + d + ")"
		}
		return t.elem.decl(d, specForm)
	case 'a':
		return t.elem.decl(fmt.Sprintf("%s[%d]", name, t.n), specForm)
	case 'f':
		var ps []string
		for _, p := range t.params {
			ps = append(ps, p.decl("", specForm))
		}
		if len(ps) == 0 {
			ps = []string{"void"}
		}
		return t.elem.decl(name+"("+strings.Join(ps, ", ")+")", specForm)
	}
	b := t.base
	if specForm {
		b = t.spec
	}
	if name == "" {
		return qualText(t.c, t.v) + b
	}
	return qualText(t.c, t.v) + b + " " + name
}

// exact reports whether the grammar spells the whole type (no function,
// no double, no void behind the pointer chain's end is fine).
func (t *genType) exact() bool {
	switch t.kind {
	case 'f':
		return false
	case 'b':
		return t.spec != ""
	}
	return t.elem.exact()
}

type propGen struct {
	r       *rand.Rand
	structs int // structs defined so far (usable by value or pointer)
	flex    map[int]bool
}

func (g *propGen) base(allowVoid bool) *genType {
	t := &genType{kind: 'b', byVal: -1}
	k := g.r.Intn(16)
	if k < 2 && g.structs > 0 {
		if i := g.r.Intn(g.structs); !g.flex[i] {
			t.base, t.spec, t.byVal = fmt.Sprintf("struct s%d", i), fmt.Sprintf("struct s%d", i), i
			k = -1
		}
	}
	switch {
	case k < 0:
	case k == 2 && allowVoid:
		t.base, t.spec = "void", "void"
	default:
		b := genBases[g.r.Intn(len(genBases))]
		t.base, t.spec = b.c, b.spec
	}
	t.c, t.v = g.r.Intn(5) == 0, g.r.Intn(9) == 0
	return t
}

// typ builds a declarator tree of at most depth levels. behindPtr allows
// void and functions (reached through a pointer).
func (g *propGen) typ(depth int, behindPtr bool) *genType {
	if depth == 0 || g.r.Intn(3) == 0 {
		return g.base(behindPtr)
	}
	switch k := g.r.Intn(10); {
	case k < 4 || k < 6 && behindPtr:
		p := &genType{kind: 'p', elem: g.typ(depth-1, true), byVal: -1}
		p.c, p.v = g.r.Intn(4) == 0, g.r.Intn(8) == 0
		return p
	case k < 8:
		e := g.typ(depth-1, false)
		for e.kind == 'b' && e.base == "void" {
			e = g.base(false)
		}
		return &genType{kind: 'a', elem: e, n: 1 + g.r.Intn(5), byVal: -1}
	}
	// A pointer to a function returning a scalar or a pointer.
	ret := g.base(true)
	if g.r.Intn(3) == 0 {
		ret = &genType{kind: 'p', elem: g.typ(depth-2, true), byVal: -1}
	}
	f := &genType{kind: 'f', elem: ret, byVal: -1}
	for range g.r.Intn(3) {
		f.params = append(f.params, &genType{kind: 'p', elem: g.base(true), byVal: -1})
	}
	return &genType{kind: 'p', elem: f, byVal: -1}
}

type genMember struct {
	name string
	t    *genType
}

func (g *propGen) structDef(i int) (string, []genMember) {
	var ms []genMember
	n := 1 + g.r.Intn(6)
	for j := range n {
		if g.r.Intn(3) == 0 {
			ms = append(ms, genMember{fmt.Sprintf("pad%d", j), &genType{kind: 'b', base: "char", spec: "char", byVal: -1}})
		}
		t := g.typ(4, false)
		for t.kind == 'b' && t.base == "void" {
			t = g.base(false)
		}
		ms = append(ms, genMember{fmt.Sprintf("m%d", j), t})
	}
	if g.r.Intn(8) == 0 {
		e := g.base(false)
		if e.byVal < 0 {
			ms = append(ms, genMember{"tail", &genType{kind: 'a', elem: e, n: -1, byVal: -1}})
			g.flex[i] = true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "struct s%d {\n", i)
	for _, m := range ms {
		d := m.t.decl(m.name, false)
		if m.t.n < 0 {
			d = strings.Replace(d, "[-1]", "[]", 1)
		}
		fmt.Fprintf(&b, "\t%s;\n", d)
	}
	b.WriteString("};\n")
	return b.String(), ms
}

func TestPropertyRoundTrip(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	total := envInt(t, "NRTABI_PROPERTY_N", 40)
	seed := int64(envInt(t, "NRTABI_PROPERTY_SEED", 17))
	start := time.Now()
	members, exact := 0, 0
	for batch := 0; batch*40 < total; batch++ {
		n := min(40, total-batch*40)
		// The same structs as DWARF 5 and DWARF 4 (other forms for the
		// same facts: data_bit_offset, strx, implicit_const).
		m, e := propertyBatch(t, seed+int64(batch), n, "-gdwarf-5")
		propertyBatch(t, seed+int64(batch), n, "-gdwarf-4")
		members, exact = members+m, exact+e
		if t.Failed() {
			return
		}
	}
	t.Logf("property: %d structs, %d members (%d spelled exactly by the grammar), DWARF 5 and 4, seeds %d.., %v",
		total, members, exact, seed, time.Since(start).Round(time.Millisecond))
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// propertyBatch checks n structs generated from seed, compiled with the
// DWARF version flag dwarf.
func propertyBatch(t *testing.T, seed int64, n int, dwarf string) (members, exact int) {
	g := &propGen{r: rand.New(rand.NewSource(seed)), flex: map[int]bool{}}
	var src strings.Builder
	src.WriteString("#include <stddef.h>\n#include <stdint.h>\n")
	all := make([][]genMember, n)
	names := make([]string, n)
	for i := range n {
		def, ms := g.structDef(i)
		src.WriteString(def)
		g.structs++
		all[i], names[i] = ms, fmt.Sprintf("s%d", i)
	}
	dir0 := t.TempDir()
	if err := writeFile(dir0, "types.c", src.String()); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir0, "types.c", "types.o", "-fno-eliminate-unused-debug-types", dwarf); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir0, "types.o")
	var b bytes.Buffer
	if err := release.Extract(obj, &b, release.ExtractOptions{Names: names, DebugDirs: []string{t.TempDir()}}); err != nil {
		t.Fatalf("seed %d: extract: %v\n%s", seed, err, src.String())
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatalf("seed %d: the fragment does not load: %v\n%s\n%s", seed, err, src.String(), b.String())
	}
	if r := gradingCheck(t, frag, obj); len(r.Findings) > 0 {
		var out bytes.Buffer
		r.WriteText(&out)
		t.Fatalf("seed %d: extract -> check is not clean:\n%s\nsource:\n%s", seed, out.String(), src.String())
	}
	// gcc confirms every spec size and offset on the original source.
	var asserts strings.Builder
	asserts.WriteString(src.String())
	for i, ms := range all {
		st := frag.StructByName(names[i])
		if st == nil {
			t.Fatalf("seed %d: fragment lacks %s", seed, names[i])
		}
		fmt.Fprintf(&asserts, "_Static_assert(sizeof(struct s%d) == %d, \"s%d size\");\n", i, st.Size, i)
		byName := map[string]*spec.Field{}
		for j := range st.Fields {
			f := &st.Fields[j]
			byName[f.Name] = f
			fmt.Fprintf(&asserts, "_Static_assert(offsetof(struct s%d, %s) == %d, \"s%d.%s offset\");\n", i, f.Name, f.Offset, i, f.Name)
			if f.T.Len >= 0 || f.T.Kind != spec.KindArray {
				fmt.Fprintf(&asserts, "_Static_assert(sizeof(((struct s%d *)0)->%s) == %d, \"s%d.%s size\");\n", i, f.Name, f.T.Size(), i, f.Name)
			}
		}
		for _, m := range ms {
			members++
			f := byName[m.name]
			if !m.t.exact() {
				continue
			}
			if f == nil {
				t.Errorf("seed %d: s%d.%s (%s) is spelled by the grammar but was not extracted as a field", seed, i, m.name, m.t.decl(m.name, false))
				continue
			}
			exact++
			want := m.t.decl(m.name, true)
			if m.t.n < 0 {
				want = strings.Replace(want, "[-1]", "[]", 1)
			}
			if got := gen.CDecl(f.T, m.name); got != want {
				t.Errorf("seed %d: s%d.%s: spec type %q spells %q, declared %q", seed, i, m.name, f.Type, got, want)
			}
		}
	}
	adir := t.TempDir()
	if err := writeFile(adir, "asserts.c", asserts.String()); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(adir, "asserts.c", "asserts.o"); err != nil {
		t.Fatalf("seed %d: gcc disagrees with the fragment's sizes: %v", seed, err)
	}
	return members, exact
}
