package elfread

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// indexSources are C units that give the index each thing unitTypes finds
// at a unit's top level: a typedef naming an anonymous struct (the first
// names it, a second is another name), a chain of typedefs, a typedef of
// a declaration and of an enum, an anonymous enum, a union, a struct only
// declared here and defined in another unit (and a struct whose members
// point at it, so that the graph shows what the declaration resolved
// to), a definition repeated and
// one the other unit defines differently (the index's later ones).
var indexSources = map[string]string{
	"p.c": `typedef struct { int k; } anon_t;
typedef anon_t anon2_t;
typedef anon2_t anon3_t;
typedef struct { long a, b; } pair_t, *pair_p;
typedef struct fwd fwd_t;
typedef enum { GREEN, BLUE } hue_t;
enum { LONE = 3 };
union num { int i; float f; };
struct same { int x; };
struct other { char c; };
struct holder { struct fwd *f; fwd_t *g; };
struct fwd *pf; anon3_t a; pair_t pr; hue_t h; union num n; struct same s; struct other o; fwd_t *pf2; struct holder hd;
`,
	"q.c": `struct fwd { int defined_here; };
struct same { int x; };
struct other { long l; };
typedef struct same same_t;
struct fwd F; struct same S; struct other O; same_t st;
`,
}

// nestedCSource is a struct holding definitions of its own (a struct, an
// enum, an anonymous union, a struct in a struct): gcc writes C's at the
// unit's top level, so the fixture is g++'s DWARF of it relabelled as C99,
// the shape another C compiler may write.
const nestedCSource = `struct outer { struct inner { int x; } y; enum color { RED } z; union { int q; float f; } u; struct deep { struct deeper { char c; } d; } w; };
struct outer g;
`

// TestScanAllTypesAgrees: the one pass (ScanAllTypes) gives the index and
// the graph ScanAll and then AllTypes give, at -j 1 and -j 2, on C units
// the walk indexes (every thing the index finds at a unit's top level, a
// C unit with nested definitions), on C++ units it leaves to the scan, on
// type units (built after the scan) and on libc's debug file when it is
// installed. Which path ran is checked too (walkIndexed), and the two
// planted faults of the walk's index, no nested definitions counted and
// no typedef's name taken, are caught.
func TestScanAllTypesAgrees(t *testing.T) {
	dir, clib, typeUnits := indexObjects(t)
	nested := nestedCObject(t, dir)
	type input struct {
		path   string
		jobs   []int
		walked bool // the walk indexes some of its units
	}
	inputs := []input{{clib, []int{1, 2}, true}, {nested, []int{1, 2}, true}, {typeUnits, []int{2}, false}, {cxxObject(t), []int{1, 2}, false}}
	if _, err := os.Stat(libcDebug); err == nil && !raceEnabled {
		inputs = append(inputs, input{libcDebug, []int{2}, true})
	} else {
		t.Logf("libc's debug file not tried (not installed, or -race, where its two graphs take 10 s): %v", err)
	}
	for _, in := range inputs {
		for _, j := range in.jobs {
			want := classicIndexGraph(t, in.path, j)
			before := walkIndexed.Load()
			got := onePassIndexGraph(t, in.path, j)
			if got != want {
				t.Errorf("%s -j %d: the one pass differs from ScanAll then AllTypes at %s", in.path, j, firstDiff(want, got))
			}
			if walked := walkIndexed.Load() > before; walked != in.walked {
				t.Errorf("%s -j %d: the walk indexed units: %v, want %v", in.path, j, walked, in.walked)
			}
		}
	}
	for _, plant := range []struct {
		name string
		on   *bool
		path string
	}{{"no nested definitions counted", &plantNoNested, nested}, {"no typedef's name taken", &plantNoTypedefs, clib}} {
		want := classicIndexGraph(t, plant.path, 1)
		*plant.on = true
		got := onePassIndexGraph(t, plant.path, 1)
		*plant.on = false
		if got == want {
			t.Errorf("the planted fault (%s) was not caught on %s", plant.name, plant.path)
		}
	}
}

// indexObjects builds indexSources into dir, twice: as libindex.so and,
// with type units (-fdebug-types-section), as libtu.so (skipped without a
// C compiler).
func indexObjects(t *testing.T) (dir, clib, typeUnits string) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir = sourcesDir(t, indexSources)
	clib = filepath.Join(dir, "libindex.so")
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", clib, "p.c", "q.c"); err != nil {
		t.Fatal(err)
	}
	typeUnits = filepath.Join(dir, "libtu.so")
	if err := cc.Run(dir, "-g", "-gdwarf-5", "-fdebug-types-section", "-O0", "-fPIC", "-shared", "-o", typeUnits, "p.c", "q.c"); err != nil {
		t.Fatal(err)
	}
	return dir, clib, typeUnits
}

// sourcesDir is a new directory holding srcs (name: text).
func sourcesDir(t *testing.T, srcs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range srcs {
		if err := writeFile(dir, name, text); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nestedCObject assembles nestedCSource's g++ DWARF with its units'
// language set to C99 (skipped without g++).
func nestedCObject(t testing.TB, dir string) string {
	t.Helper()
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	if err := os.WriteFile(filepath.Join(dir, "nested.cc"), []byte(nestedCSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-g", "-O0", "-S", "-dA", "-o", "nested.s", "nested.cc"); err != nil {
		t.Fatal(err)
	}
	asm, err := os.ReadFile(filepath.Join(dir, "nested.s"))
	if err != nil {
		t.Fatal(err)
	}
	lang := regexp.MustCompile(`(?m)^(\s*\.byte\s+)0x[0-9a-f]+(\s*# DW_AT_language)$`)
	if !lang.Match(asm) {
		t.Fatal("g++ -S -dA wrote no DW_AT_language line to relabel")
	}
	asm = lang.ReplaceAll(asm, []byte("${1}0xc${2}"))
	if err := os.WriteFile(filepath.Join(dir, "nestedc.s"), asm, 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "nestedc.o")
	if err := cc.Run(dir, "-c", "-o", obj, "nestedc.s"); err != nil {
		t.Fatal(err)
	}
	return obj
}

// classicIndexGraph is path's index (ScanAll) and graph (AllTypes after
// it) as text.
func classicIndexGraph(t *testing.T, path string, jobs int) string {
	t.Helper()
	d := openDebugT(t, path)
	idx, err := d.ScanAll(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	g, err := d.AllTypes(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	return renderIndex(idx) + dumpGraph(g)
}

// onePassIndexGraph is classicIndexGraph by ScanAllTypes.
func onePassIndexGraph(t *testing.T, path string, jobs int) string {
	t.Helper()
	idx, g := onePass(t, path, jobs)
	return renderIndex(idx) + dumpGraph(g)
}

// onePass is the index and the graph ScanAllTypes makes of path at -j
// jobs.
func onePass(t *testing.T, path string, jobs int) (*Index, *Types) {
	t.Helper()
	d := openDebugT(t, path)
	idx, g, err := d.ScanAllTypes(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	return idx, g
}

// TestDefsOfUnitsAgrees: the declarations' table the one pass makes from
// the units' scans beside their merge is the table of the merged index,
// on C units with a declaration defined in another unit and definitions
// repeated and differing, on C++ units and on libc's debug file; on type
// units namesTypeUnits says it would not hold (the merge names their
// anonymous definitions).
func TestDefsOfUnitsAgrees(t *testing.T) {
	_, clib, typeUnits := indexObjects(t)
	paths := []string{clib, cxxObject(t), typeUnits}
	if _, err := os.Stat(libcDebug); err == nil {
		paths = append(paths, libcDebug)
	}
	for _, path := range paths {
		d := openDebugT(t, path)
		var scans []*unitTypes
		var sc *scanner
		for _, p := range d.all() {
			for i := 0; ; i++ {
				u, ok, err := p.unit(i)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				r := new(unitTypes)
				sc = scanUnitTypes(context.Background(), sc, scanItem{p: p, u: u}, r)
				scans = append(scans, r)
			}
		}
		named := namesTypeUnits(scans)
		idx, err := d.ScanAll(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if path == typeUnits {
			if !named {
				t.Errorf("%s: type units' typedefs were not seen: the units' table would be made over them", path)
			}
			continue
		}
		got, want := defsOfUnits(scans), defsOf(idx)
		if named || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the units' table (type units' names seen: %v, %d names) is not the index's (%d names)", path, named, len(got), len(want))
		}
		if path == clib {
			if dd := want[declKey{false, "fwd"}]; !dd.ok {
				t.Errorf("%s: struct fwd, defined in q.c, has no definition in the table: %+v", path, dd)
			}
			if dd := want[declKey{false, "other"}]; dd.clash == "" {
				t.Errorf("%s: struct other, defined differently by p.c and q.c, is no clash in the table: %+v", path, dd)
			}
		}
	}
}

// TestIndexNodes: the one pass's index gives each definition its walk
// decoded the node the graph holds at its offset (Types.At), on C units
// (named and anonymous definitions, the names typedefs give them), on
// g++'s nested-C object and on libc's debug file, and at least one per
// input (a Node that never found one would pass otherwise); it gives none
// where the graph was built again after the scan (type units, or the one
// pass turned off) nor from ScanAll's index. The planted rebuild that keeps
// the dropped graphs' nodes is caught.
func TestIndexNodes(t *testing.T) {
	dir, clib, typeUnits := indexObjects(t)
	nested := nestedCObject(t, dir)
	nodes := func(path string) (found, wrong int) {
		t.Helper()
		idx, g := onePass(t, path, 2)
		for _, n := range slices.Concat(idx.Types, idx.Later) {
			node, ok := idx.Node(n)
			if !ok {
				continue
			}
			found++
			if at, err := g.At(n.Offset); err != nil || at != node {
				wrong++
			}
		}
		return found, wrong
	}
	paths := []string{clib, nested}
	if _, err := os.Stat(libcDebug); err == nil && !raceEnabled {
		paths = append(paths, libcDebug)
	} else {
		t.Logf("libc's debug file not tried (not installed, or -race): %v", err)
	}
	for _, p := range paths {
		if found, wrong := nodes(p); found == 0 || wrong > 0 {
			t.Errorf("%s: %d definitions with a node, %d of them not the graph's at their offset", p, found, wrong)
		}
	}
	if found, _ := nodes(typeUnits); found > 0 {
		t.Errorf("%s (type units, the graph built again): %d definitions with a node, want none", typeUnits, found)
	}
	buildAfterScan = true
	found, _ := nodes(clib)
	plantStaleNodes = true
	_, wrong := nodes(clib)
	buildAfterScan, plantStaleNodes = false, false
	if found > 0 {
		t.Errorf("%s with the one pass turned off: %d definitions with a node, want none", clib, found)
	}
	if wrong == 0 {
		t.Error("the planted rebuild that keeps the dropped graphs' nodes was not caught")
	}
	d := openDebugT(t, clib)
	idx, err := d.ScanAll(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range idx.Types {
		if _, ok := idx.Node(n); ok {
			t.Fatalf("ScanAll's index gives %s %s a node", n.Kind, n.Name)
		}
	}
}

// TestDeclNodesAgree: the graph is the same whether the workers find each
// declaration's definition in the units' tables before join (where the
// index came first: the one pass) or join looks every one up itself
// (AllTypes alone, or noDeclNodes), on C units with
// a declaration defined in another unit, on C++ units and on libc's debug
// file; the planted lookup that takes a declaration for its own definition
// is caught.
func TestDeclNodesAgree(t *testing.T) {
	_, clib, _ := indexObjects(t)
	paths := []string{clib, cxxObject(t)}
	if _, err := os.Stat(libcDebug); err == nil && !raceEnabled {
		paths = append(paths, libcDebug)
	} else {
		t.Logf("libc's debug file not tried (not installed, or -race): %v", err)
	}
	without := func(path string) string {
		t.Helper()
		noDeclNodes = true
		defer func() { noDeclNodes = false }()
		return graphDump(t, path)
	}
	for _, path := range paths {
		want := without(path)
		if got := graphDump(t, path); got != want {
			t.Errorf("%s: AllTypes' graph with the definitions found before join differs at %s", path, firstDiff(want, got))
		}
		if got := onePassGraph(t, path, 2); got != want {
			t.Errorf("%s: the one pass's graph with the definitions found before join differs at %s", path, firstDiff(want, got))
		}
	}
	want := without(clib)
	plantDeclSelf = true
	got := onePassGraph(t, clib, 2)
	plantDeclSelf = false
	if got == want {
		t.Error("the planted lookup (a declaration found as its own definition) was not caught")
	}
}
