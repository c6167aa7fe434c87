package elfread

import (
	"context"
	"debug/dwarf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/fixture"
	"github.com/nrtabi/nrtabi/typemodel"
)

// The real-artefact agreement test: for real inputs (libc's debug file,
// C and C++ objects at DWARF 4 and 5, a -gsplit-dwarf library, a dwz'd
// pair, the fixture libraries), every struct, class and union pahole
// prints is compared with the type graph's node for the same DIE: the
// size, and each data member's and base class's name, byte offset,
// bitfield position and width, and type size. The same run holds the
// graph to decoding each DIE once. NRTABI_REALWORLD=1 runs it wide
// (TestPaholeAgreeWide).

// agreeInput is one input: the file the graph is built from and the
// files pahole reads for it (a split unit's .dwo, since pahole does not
// follow a skeleton unit).
type agreeInput struct {
	name   string
	model  string
	pahole []string
	dirs   []string
	// byName: pahole reads another build of the same source (before dwz,
	// whose output pahole 1.24 prints nothing of), so its structs are
	// matched to the graph's by name, not DIE offset.
	byName bool
	// sysroot: the extracted package tree the input is in, for gdb to
	// find a supplement named by its installed path.
	sysroot string
}

// disagreement is one member or struct on which pahole and the graph
// differ.
type disagreement struct {
	Class, File, Struct, Member, Pahole, Model string
}

func (d disagreement) String() string {
	m := ""
	if d.Member != "" {
		m = " member " + d.Member
	}
	return fmt.Sprintf("%s: %s%s: pahole %s, model %s", d.File, d.Struct, m, d.Pahole, d.Model)
}

// paholeConvention lists the classes where pahole, not the graph, is off
// or where the two count by another convention; they are reported, not
// failed:
//   - pahole 1.24 prints the size of a pointer to member function from an
//     uninitialised field (25770 and the like); the ABI's is two words.
//   - pahole 1.24 knows no DW_TAG_atomic_type: it prints an error line in
//     the member's place.
//   - pahole 1.24 prints a DWARF 4 static member (a DW_TAG_member with
//     DW_AT_declaration) as a member at offset 0 of size 0.
//   - pahole prints a virtual base's offset as -1 read unsigned: the DWARF
//     gives it as an expression evaluated at run time (the graph: Virtual).
//   - pahole prints 0 for the size of a base or member of an empty class
//     (the room it takes under the empty base optimization or
//     [[no_unique_address]]); the graph gives the type's size, 1.
//   - pahole sizes a pointer to data member as the member's type; the
//     Itanium C++ ABI's is a ptrdiff_t.
//   - pahole prints 0 for the size of a base class its unit only
//     declares; the graph reads the definition.
//   - pahole prints a Go func value's size from something other than its
//     DW_AT_byte_size (553498 and the like); it is a pointer, 8 bytes.
var paholeConvention = map[string]string{
	"pahole-static-member":                        "pahole 1.24 prints a DWARF 4 static member as a member at offset 0, size 0",
	"member-offset/virtual-base":                  "pahole prints 4294967295 for a virtual base's offset (a location expression evaluated at run time)",
	"member-type-size/empty-class":                "pahole prints 0 for the size of a base or member of an empty class (the room it takes), the graph sizeof, 1",
	"member-type-size/pointer-to-data-member":     "pahole sizes a pointer to data member as the member's type; the Itanium C++ ABI's is a ptrdiff_t (8)",
	"pahole-unknown-type":                         "pahole prints <ERROR ... not found!> for a member of a type it does not read (DW_TAG_atomic_type in 1.24)",
	"member-type-size/pointer-to-member-function": "pahole prints no real size for a pointer to member function (two words in the Itanium C++ ABI)",
	"member-type-size/declared-base":              "pahole prints 0 for the size of a base class its unit only declares (DW_AT_declaration, no size); the graph takes the definition another unit holds (TestDeclaredMemberTypeSize)",
	"member-type-size/go-func-value":              "pahole prints no real size for a Go func value (a DW_TAG_subroutine_type whose DW_AT_byte_size is 8, a pointer; TestFuncValueSize)",
}

// agreeStats is what one comparison checked and found.
type agreeStats struct {
	Structs, Members int
	Diffs            []disagreement
}

func (a *agreeStats) add(b agreeStats) {
	a.Structs += b.Structs
	a.Members += b.Members
	a.Diffs = append(a.Diffs, b.Diffs...)
}

// modelAgg is an aggregate node of the graph with the file and local DIE
// offset it came from.
type modelAgg struct {
	t     *typemodel.Type
	path  string
	local uint64
}

// modelAggregates indexes the graph's struct, class and union
// definitions by local DIE offset.
func modelAggregates(g *Types) map[uint64][]modelAgg {
	var offs []uint64
	var nodes []*typemodel.Type
	g.each(func(off uint64, n *typemodel.Type) {
		if n.Kind.Aggregate() && !n.Declaration {
			offs, nodes = append(offs, off), append(nodes, n)
		}
	})
	out := map[uint64][]modelAgg{}
	for i, off := range offs {
		path, lo := g.Where(dwarf.Offset(off))
		out[uint64(lo)] = append(out[uint64(lo)], modelAgg{nodes[i], path, uint64(lo)})
	}
	return out
}

// sameName: a graph name (qualified) is the name pahole prints (the
// DIE's own, or the typedef's for an anonymous struct).
func sameName(model, pahole string) bool {
	return model == pahole || bareName(model) == pahole
}

// byNameIndex re-keys the graph's aggregates by bare name.
func byNameIndex(byLocal map[uint64][]modelAgg) map[string][]modelAgg {
	out := map[string][]modelAgg{}
	for _, l := range byLocal {
		for _, m := range l {
			out[bareName(m.t.Name)] = append(out[bareName(m.t.Name)], m)
		}
	}
	return out
}

// agreeByName compares pahole's structs with the graph's of the same
// name: the one of them that agrees best.
func agreeByName(byLocal map[uint64][]modelAgg, file string, ps []paholeStruct) agreeStats {
	idx := byNameIndex(byLocal)
	var st agreeStats
	for i := range ps {
		p := &ps[i]
		var best *agreeStats
		for _, m := range idx[p.Name] {
			var one agreeStats
			diff := func(class, member, ph, mo string) {
				one.Diffs = append(one.Diffs, disagreement{class, file, p.Kind + " " + p.Name + " (by name)", member, ph, mo})
			}
			one.Structs++
			agreeStruct(p, m.t, diff, &one)
			if best == nil || len(failingOf(one.Diffs)) < len(failingOf(best.Diffs)) {
				best = &one
			}
		}
		if best == nil {
			st.Diffs = append(st.Diffs, disagreement{"no-model-struct", file, p.Kind + " " + p.Name + " (by name)", "", "a definition", "none of this name"})
			continue
		}
		st.add(*best)
	}
	return st
}

// agreeWith compares what pahole printed of file with the graph.
func agreeWith(byLocal map[uint64][]modelAgg, file string, ps []paholeStruct) agreeStats {
	var st agreeStats
	for i := range ps {
		p := &ps[i]
		diff := func(class, member, ph, mo string) {
			st.Diffs = append(st.Diffs, disagreement{class, file, p.Kind + " " + p.Name + fmt.Sprintf(" <%#x>", p.Off), member, ph, mo})
		}
		if !p.HasOff {
			diff("no-die-offset", "", "no <offset> line", "-")
			continue
		}
		var m *modelAgg
		cands := byLocal[p.Off]
		for j := range cands {
			c := &cands[j]
			if sameName(c.t.Name, p.Name) && (m == nil || c.path == file) {
				m = c
			}
		}
		if m == nil && len(cands) == 1 {
			m = &cands[0]
			diff("struct-name", "", p.Name, m.t.Name)
		}
		if m == nil {
			diff("no-model-struct", "", "a definition at this DIE", fmt.Sprintf("%d aggregates there", len(cands)))
			continue
		}
		st.Structs++
		agreeStruct(p, m.t, diff, &st)
	}
	return st
}

func agreeStruct(p *paholeStruct, t *typemodel.Type, diff func(class, member, ph, mo string), st *agreeStats) {
	if kw := t.Kind.String(); kw != p.Kind {
		diff("struct-kind", "", p.Kind, kw)
	}
	if p.HasSize && p.Size != t.Size {
		diff("struct-size", "", itoa(p.Size), itoa(t.Size))
	}
	for range p.Statics {
		diff("pahole-static-member", "", "a static member printed as a member", "no member")
	}
	if len(p.Members) != len(t.Fields) {
		var a, b []string
		for _, pm := range p.Members {
			a = append(a, pm.Name)
		}
		for _, f := range t.Fields {
			b = append(b, f.Label())
		}
		diff("member-count", "", fmt.Sprintf("%d %v", len(a), a), fmt.Sprintf("%d %v", len(b), b))
		return
	}
	for i := range p.Members {
		pm, f := &p.Members[i], &t.Fields[i]
		st.Members++
		label := f.Label()
		if pm.Unknown {
			diff("pahole-unknown-type", label, pm.Decl, typemodel.Decl(f.Type, f.Name))
			continue
		}
		switch {
		case pm.Base != f.Base:
			diff("member-base", label, fmt.Sprintf("base %v (%s)", pm.Base, pm.Decl), fmt.Sprintf("base %v", f.Base))
			continue
		case pm.Base && !sameName(f.Name, pm.Name):
			diff("base-name", label, pm.Name, f.Name)
		case !pm.Base && pm.Name != f.Name:
			diff("member-name", label, fmt.Sprintf("%q (%s)", pm.Name, pm.Decl), fmt.Sprintf("%q", f.Name))
		}
		if pm.Size != f.Size() {
			class := "member-type-size"
			s := typemodel.Strip(f.Type)
			switch {
			case s != nil && s.Kind == typemodel.PtrToMember && typemodel.Strip(s.Elem) != nil && typemodel.Strip(s.Elem).Kind == typemodel.Func:
				class += "/pointer-to-member-function"
			case s != nil && s.Kind == typemodel.PtrToMember:
				class += "/pointer-to-data-member"
			case s != nil && s.Kind.Aggregate() && pm.Size == 0 && f.Size() == 1 && emptyClass(s):
				class += "/empty-class"
			case s != nil && pm.Base && pm.Size == 0 && s.Kind.Aggregate():
				// Not empty (above): pahole sizes a base from its own
				// unit's DIE, which has no size when it only declares it.
				class += "/declared-base"
			case s != nil && s.Kind == typemodel.Func && s.HasSize && f.Size() == 8:
				class += "/go-func-value"
			case s != nil:
				class += "/" + s.Kind.String()
			}
			diff(class, label, itoa(pm.Size), itoa(f.Size())+" ("+typemodel.Spell(f.Type)+")")
		}
		if pm.IsBit != (f.BitSize > 0) {
			diff("bitfield-ness", label, fmt.Sprintf("bitfield %v (%s)", pm.IsBit, pm.Decl), fmt.Sprintf("bitfield %v", f.BitSize > 0))
			continue
		}
		if !pm.IsBit {
			if pm.Off != f.Offset {
				class := "member-offset"
				if f.Virtual && pm.Off == 1<<32-1 {
					class += "/virtual-base"
				}
				diff(class, label, itoa(pm.Off), itoa(f.Offset))
			}
			continue
		}
		if pm.BitSize != f.BitSize {
			diff("bitfield-width", label, itoa(pm.BitSize), itoa(f.BitSize))
		}
		if abs := pm.Off*8 + pm.Bit; abs != f.BitOffset {
			diff("bitfield-bit-offset", label, fmt.Sprintf("%d:%d = bit %d", pm.Off, pm.Bit, abs), fmt.Sprintf("bit %d", f.BitOffset))
		}
		if pm.Off != f.Offset {
			diff("bitfield-storage-offset", label, itoa(pm.Off), itoa(f.Offset))
		}
	}
}

// emptyClass: a class without data members, whose bases are empty too.
func emptyClass(t *typemodel.Type) bool {
	var walk func(t *typemodel.Type, depth int) bool
	walk = func(t *typemodel.Type, depth int) bool {
		if t == nil || depth > typemodel.MaxDepth || !t.Kind.Aggregate() {
			return false
		}
		for i := range t.Fields {
			f := &t.Fields[i]
			if !f.Base || !walk(typemodel.Strip(f.Type), depth+1) {
				return false
			}
		}
		return true
	}
	return walk(t, 0)
}

// classOf is a disagreement's class as the reports count it.
func classOf(d disagreement) string { return d.Class }

// summarize counts the disagreements by class and keeps one example of
// each; failing lists the classes that are not pahole's convention.
func summarize(diffs []disagreement) (lines []string, failing []string) {
	count := map[string]int{}
	first := map[string]disagreement{}
	for _, d := range diffs {
		c := classOf(d)
		if count[c] == 0 {
			first[c] = d
		}
		count[c]++
	}
	for _, c := range sortedKeys(count) {
		note := ""
		if why, ok := paholeConvention[c]; ok {
			note = " [pahole's convention: " + why + "]"
		} else {
			failing = append(failing, c)
		}
		lines = append(lines, fmt.Sprintf("%-45s %6d  e.g. %s%s", c, count[c], first[c], note))
	}
	return lines, failing
}

// logAll logs every disagreement when NRTABI_REALWORLD_ALL is set.
func logAll(t *testing.T, diffs []disagreement) {
	if os.Getenv("NRTABI_REALWORLD_ALL") == "" {
		return
	}
	for _, d := range diffs {
		t.Logf("%s %s", d.Class, d)
	}
}

// failingOf drops the disagreements of paholeConvention's classes.
func failingOf(diffs []disagreement) (out []disagreement) {
	for _, d := range diffs {
		if _, ok := paholeConvention[d.Class]; !ok {
			out = append(out, d)
		}
	}
	return out
}

// checkInput builds the graph of one input on two workers with the
// decode-once hook on, and compares it with pahole's reading of it.
func checkInput(t *testing.T, in agreeInput, timeout time.Duration) (agreeStats, error) {
	t.Helper()
	withDecodeCount(t)
	dirs := in.dirs
	if dirs == nil {
		dirs = []string{t.TempDir()}
	}
	d, err := OpenDebug(context.Background(), in.model, Lookup{Dirs: dirs, AllowMissing: true})
	if err != nil {
		return agreeStats{}, err
	}
	defer d.Close()
	for _, m := range d.Missing {
		t.Logf("%s: %s", in.name, m)
	}
	g, err := d.AllTypes(context.Background(), 2)
	if err != nil {
		return agreeStats{}, err
	}
	dec := g.Decodes()
	for off, n := range dec {
		if n > 1 {
			return agreeStats{}, fmt.Errorf("DIE %#x decoded %d times (%d DIEs decoded)", off, n, len(dec))
		}
	}
	if len(dec) == 0 {
		return agreeStats{}, errors.New("the decode hook counted nothing")
	}
	byLocal := modelAggregates(g)
	scoped := scopedNames(t, byLocal)
	var st agreeStats
	for _, p := range in.pahole {
		ps, _, err := runPahole(context.Background(), p, timeout)
		if err != nil {
			return st, err
		}
		if scoped != "" {
			// pahole prints only the types at a unit's top level; a
			// type in a namespace or a class it prints when named (-C)
			more, _, err := runPahole(context.Background(), p, timeout, "-C", "file://"+scoped)
			if err != nil {
				return st, err
			}
			ps = appendNew(ps, more)
		}
		if in.byName {
			st.add(agreeByName(byLocal, p, ps))
		} else {
			st.add(agreeWith(byLocal, p, ps))
		}
	}
	return st, nil
}

// scopedNames writes the bare names of the graph's aggregates in a scope
// (a C++ namespace or class) to a file for pahole -C, and returns its
// path; "" when there are none. Template instances are left out: pahole
// 1.24 finds none by name (their DW_AT_name carries the arguments).
func scopedNames(t *testing.T, byLocal map[uint64][]modelAgg) string {
	seen := map[string]bool{}
	var names []string
	for _, l := range byLocal {
		for _, m := range l {
			b := bareName(m.t.Name)
			if b == m.t.Name || b == "" || strings.ContainsAny(b, "<( ") || seen[b] {
				continue
			}
			seen[b] = true
			names = append(names, b)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	path := filepath.Join(t.TempDir(), "names.txt")
	if err := os.WriteFile(path, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// appendNew adds the structs of more whose DIE ps does not hold yet.
func appendNew(ps, more []paholeStruct) []paholeStruct {
	have := map[uint64]bool{}
	for _, p := range ps {
		if p.HasOff {
			have[p.Off] = true
		}
	}
	for _, p := range more {
		if !p.HasOff || !have[p.Off] {
			ps = append(ps, p)
			have[p.Off] = true
		}
	}
	return ps
}

// realSource is a test source of testdata/realworld.
func realSource(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "realworld", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func needPahole(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("pahole"); err != nil {
		t.Skipf("skipping: %v (%v)", errNoPahole, err)
	}
}

// compiled compiles a source of testdata/realworld with flags into dir
// (an object, or a shared library with -shared), returning its path.
func compiled(t testing.TB, dir, src, out string, flags ...string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, src), realSource(t, src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-o", out}, flags...)
	if !strings.Contains(strings.Join(flags, " "), "-shared") {
		args = append(args, "-c")
	}
	if err := cc.Run(dir, append(args, src)...); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, out)
}

// cheapInputs are the inputs of make test: seconds in all.
func cheapInputs(t *testing.T) []agreeInput {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	var ins []agreeInput
	if _, err := os.Stat(libcDebug); err != nil {
		t.Logf("libc's debug file is not installed (libc6-dbg): %v", err)
	} else {
		ins = append(ins, agreeInput{name: "libc", model: libcDebug, pahole: []string{libcDebug}})
	}
	dir := t.TempDir()
	cxx := true
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Logf("no C++ inputs: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
		cxx = false
	}
	for _, v := range []string{"4", "5"} {
		o := compiled(t, dir, "agree.c", "c"+v+".o", "-g", "-gdwarf-"+v, "-O0")
		ins = append(ins, agreeInput{name: "C DWARF " + v, model: o, pahole: []string{o}})
		if cxx {
			o := compiled(t, dir, "agree.cc", "cxx"+v+".o", "-g", "-gdwarf-"+v, "-O0")
			ins = append(ins, agreeInput{name: "C++ DWARF " + v, model: o, pahole: []string{o}})
		}
	}
	so := compiled(t, dir, "agree.c", "libsplit.so", "-g", "-gsplit-dwarf", "-gdwarf-5", "-fPIC", "-shared")
	dwos, _ := filepath.Glob(filepath.Join(dir, "*agree*.dwo"))
	if len(dwos) == 0 {
		dwos, _ = filepath.Glob(filepath.Join(dir, "*.dwo"))
	}
	if len(dwos) == 0 {
		t.Fatalf("-gsplit-dwarf left no .dwo in %s", dir)
	}
	ins = append(ins, agreeInput{name: "C -gsplit-dwarf", model: so, pahole: dwos})
	ins = append(ins, dwzInputs(t)...)
	ins = append(ins, fixtureInputs(t)...)
	return ins
}

// dwzInputs is a pair of libraries built from agree.c whose shared types
// dwz moved into a supplement; none, with the reason logged, without dwz.
func dwzInputs(t *testing.T) (ins []agreeInput) {
	t.Helper()
	src := string(realSource(t, "agree.c"))
	if _, err := exec.LookPath("dwz"); err != nil {
		t.Logf("no dwz inputs: dwz not found (install the Debian package dwz): %v", err)
		return nil
	}
	srcB := src + "\nstruct only_b { struct bits b; char tail; } g_only_b;\n"
	// the same libraries before dwz, for pahole
	pre := t.TempDir()
	for n, s := range map[string]string{"a": src, "b": srcB} {
		if err := writeFile(pre, n+".c", s); err != nil {
			t.Fatal(err)
		}
		if err := cc.Shared(pre, "lib"+n+".so", "", "", []string{n + ".c"}, "-Wl,--build-id"); err != nil {
			t.Fatal(err)
		}
	}
	dir := buildDwzPair(t, src, srcB)
	for _, lib := range []string{"liba.so", "libb.so"} {
		ins = append(ins, agreeInput{name: "dwz " + lib, model: filepath.Join(dir, lib), pahole: []string{filepath.Join(pre, lib)}, dirs: []string{dir}, byName: true})
	}
	return ins
}

// fixtureInputs are the fixture libraries (internal/fixture) of the first
// release generated in the checkout.
func fixtureInputs(t *testing.T) []agreeInput {
	t.Helper()
	root := filepath.Join("..", "..", "generated")
	heads, _ := filepath.Glob(filepath.Join(root, "*", "c", "nrtabi.h"))
	if len(heads) == 0 {
		t.Logf("no fixture libraries: no generated release under %s", root)
		return nil
	}
	rel := filepath.Base(filepath.Dir(filepath.Dir(heads[0])))
	b, err := fixture.Build(root, rel)
	if err != nil {
		t.Fatalf("fixture libraries of %s: %v", rel, err)
	}
	t.Cleanup(func() { os.RemoveAll(b.Dir) })
	return []agreeInput{
		{name: "fixture libnrt " + rel, model: b.Libnrt, pahole: []string{b.Libnrt}},
		{name: "fixture libnccom " + rel, model: b.Libnccom, pahole: []string{b.Libnccom}},
	}
}

// TestPaholeAgree: on the cheap real inputs, every struct pahole prints
// agrees with the graph (classes of paholeConvention aside), and each DIE
// is decoded once.
func TestPaholeAgree(t *testing.T) {
	needPahole(t)
	start := time.Now()
	var all agreeStats
	ins := cheapInputs(t)
	for _, in := range ins {
		st, err := checkInput(t, in, 60*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", in.name, err)
		}
		if st.Structs == 0 {
			t.Errorf("%s: pahole printed no struct the graph has: nothing checked", in.name)
		}
		t.Logf("%s: %d structs, %d members compared, %d disagreements", in.name, st.Structs, st.Members, len(st.Diffs))
		all.add(st)
	}
	logAll(t, all.Diffs)
	lines, failing := summarize(all.Diffs)
	t.Logf("%d inputs, %d structs, %d members compared in %v", len(ins), all.Structs, all.Members, time.Since(start).Round(time.Millisecond))
	for _, l := range lines {
		t.Log(l)
	}
	if len(failing) > 0 {
		t.Errorf("pahole and the graph disagree: %v", failing)
	}
}

// TestPaholeAgreePlanted: the comparison catches a planted fault (a member
// moved by one byte, a bitfield narrowed, a struct resized).
func TestPaholeAgreePlanted(t *testing.T) {
	needPahole(t)
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	o := compiled(t, dir, "agree.c", "c.o", "-g", "-O0")
	d := openDebugT(t, o)
	g, err := d.AllTypes(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	ps, _, err := runPahole(context.Background(), o, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	byLocal := modelAggregates(g)
	if st := agreeWith(byLocal, o, ps); st.Structs == 0 || len(failingOf(st.Diffs)) != 0 {
		t.Fatalf("the unplanted object: %d structs, %v", st.Structs, st.Diffs)
	}
	for name, plant := range map[string]func(p *paholeStruct) bool{
		"member-offset": func(p *paholeStruct) bool {
			if p.Name == "fptrs" {
				p.Members[1].Off++
				return true
			}
			return false
		},
		"bitfield-width": func(p *paholeStruct) bool {
			if p.Name == "bits" {
				p.Members[0].BitSize--
				return true
			}
			return false
		},
		"struct-size": func(p *paholeStruct) bool {
			if p.Name == "aligned" {
				p.Size++
				return true
			}
			return false
		},
	} {
		cp := make([]paholeStruct, len(ps))
		planted := false
		for i := range ps {
			cp[i] = ps[i]
			cp[i].Members = append([]paholeMember(nil), ps[i].Members...)
			planted = plant(&cp[i]) || planted
		}
		if !planted {
			t.Fatalf("%s: no struct to plant in", name)
		}
		st := agreeWith(byLocal, o, cp)
		if f := failingOf(st.Diffs); len(f) != 1 || f[0].Class != name {
			t.Errorf("%s planted: %v", name, st.Diffs)
		}
	}
}
