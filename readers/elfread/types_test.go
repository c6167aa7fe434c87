package elfread

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/fixture"
	"github.com/nrtabi/nrtabi/typemodel"
)

// libcDebug is libc6-dbg's debug file of the libc this machine runs.
const libcDebug = "/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug"

// libstdcxxDebug is libstdc++'s debug file (libstdc++6-dbg).
const libstdcxxDebug = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"

func openDebugT(t testing.TB, path string) *Debug {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: %s is not installed (%v)", path, err)
	}
	d, err := OpenDebug(context.Background(), path, Lookup{Dirs: []string{t.TempDir()}, AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// withDecodeCount turns the decode-once hook on for one test.
func withDecodeCount(t *testing.T) {
	countDecodes = true
	t.Cleanup(func() { countDecodes = false })
}

func assertDecodedOnce(t *testing.T, g *Types) int {
	t.Helper()
	dec := g.Decodes()
	if len(dec) == 0 {
		t.Fatal("the decode hook counted nothing")
	}
	bad := 0
	for off, n := range dec {
		if n > 1 {
			if bad++; bad < 5 {
				t.Errorf("DIE %#x decoded %d times", off, n)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d DIEs decoded more than once", bad)
	}
	return len(dec)
}

// TestTypesDecodeOnce: building the whole graph (AllTypes on two
// workers), then every struct ScanAll lists through At, decodes each DIE
// of libc, libstdc++, a C++ object and our own libnrt and libnccom (the
// 2.31.24 fixture) at most once.
func TestTypesDecodeOnce(t *testing.T) {
	paths := []string{libcDebug, libstdcxxDebug, cxxObject(t)}
	bins, err := fixture.Build(filepath.Join("..", "..", "generated"), "2.31.24")
	if err != nil {
		t.Fatalf("building the fixture libraries: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(bins.Dir) })
	paths = append(paths, bins.Libnrt, bins.Libnccom)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			withDecodeCount(t)
			d := openDebugT(t, path)
			g, err := d.AllTypes(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := d.ScanAll(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range idx.Types {
				if _, err := g.At(n.Offset); err != nil {
					t.Fatalf("%s: %v", n.Name, err)
				}
			}
			n := assertDecodedOnce(t, g)
			t.Logf("%s: %d DIEs decoded, %d nodes", path, n, g.Len())
		})
	}
}

// TestTypesLazyDecodeOnce: one-struct lookups (show, check) decode only
// what the struct reaches, each DIE once however many lookups reach it.
func TestTypesLazyDecodeOnce(t *testing.T) {
	withDecodeCount(t)
	d := openDebugT(t, libcDebug)
	found, err := d.FindStructs([][]string{{"_IO_FILE"}, {"pthread_attr_t"}, {"link_map"}})
	if err != nil {
		t.Fatal(err)
	}
	g := d.Types()
	for _, f := range found {
		if f == nil {
			t.Fatal("a libc struct was not found")
		}
		s, err := g.Struct(f.Offset)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Fields) == 0 || !s.HasSize {
			t.Fatalf("%s: %+v", f.Name, s)
		}
		if _, err := g.Struct(f.Offset); err != nil {
			t.Fatal(err)
		}
	}
	n := assertDecodedOnce(t, g)
	if info := len(d.info); n*8 > info {
		t.Errorf("%d DIEs decoded for three structs of %d bytes of .debug_info: not lazy", n, info)
	}
}

// TestTypesPlantedSecondDecode: the hook catches a DIE decoded twice.
func TestTypesPlantedSecondDecode(t *testing.T) {
	withDecodeCount(t)
	plantSecondDecode = true
	defer func() { plantSecondDecode = false }()
	d := openDebugT(t, cxxObject(t))
	found, err := d.FindStructs([][]string{{"app::holder"}})
	if err != nil || found[0] == nil {
		t.Fatalf("app::holder: %v %v", found, err)
	}
	if _, err := d.Types().At(found[0].Offset); err != nil {
		t.Fatal(err)
	}
	twice := 0
	for _, n := range d.Types().Decodes() {
		if n > 1 {
			twice++
		}
	}
	if twice == 0 {
		t.Fatal("a planted second decode went unseen")
	}
}

// TestTypesInterned: int and const char * are one node across libc's
// units; two units' struct definitions stay two nodes.
func TestTypesInterned(t *testing.T) {
	d := openDebugT(t, libcDebug)
	g, err := d.AllTypes(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	ints := map[*typemodel.Type]bool{}
	ccp := map[*typemodel.Type]bool{}
	g.each(func(_ uint64, n *typemodel.Type) {
		if n.Kind == typemodel.Base && n.Name == "int" {
			ints[n] = true
		}
		if typemodel.Spell(n) == "const char *" && n.Kind == typemodel.Pointer {
			ccp[n] = true
		}
	})
	if len(ints) != 1 || len(ccp) != 1 {
		t.Fatalf("%d int nodes, %d const char * nodes; want one each", len(ints), len(ccp))
	}
	idx, err := d.ScanAll(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Later) == 0 {
		t.Fatal("libc defines no struct twice")
	}
	a, _ := g.At(idx.Later[0].Offset)
	for _, n := range idx.Types {
		if n.Name == idx.Later[0].Name && n.Kind == idx.Later[0].Kind {
			if b, _ := g.At(n.Offset); a == b {
				t.Fatalf("%s: two units' definitions are one node", n.Name)
			}
		}
	}
}

// TestTypesSpelling: the graph spells libc's members as C does.
func TestTypesSpelling(t *testing.T) {
	d := openDebugT(t, libcDebug)
	found, err := d.FindStructs([][]string{{"_IO_FILE"}})
	if err != nil || found[0] == nil {
		t.Fatal(err)
	}
	s, err := d.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.Fields {
		got = append(got, typemodel.Decl(f.Type, f.Name))
	}
	all := strings.Join(got, "; ")
	for _, want := range []string{"int _flags", "char *_IO_read_ptr", "struct _IO_FILE *_chain", "char _shortbuf[1]", "void *_freeres_buf", "_IO_lock_t *_lock"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in %s", want, all)
		}
	}
}

var cxxSource = `#include <string>
#include <vector>
#include <map>
namespace app {
struct base { virtual ~base(); int b; };
struct point { int x, y; };
struct holder : base {
	std::vector<point> pts;
	std::map<std::string, int> names;
	int (*fp)(const char *, ...);
	int point::*pm;
	int &(*rf)();
	unsigned bits : 3, more : 7;
	static int counter;
	char grid[2][3];
	struct inner { long q; } in;
};
base::~base() {}
holder h;
}
`

// cxxObject is a C++ object compiled with g++ -g for these tests.
func cxxObject(t testing.TB) string { return cxxObjectOf(t, "h", cxxSource) }

// cxxObjectOf is src compiled as name.cc with g++ -g -O0 into a temporary
// directory (the test is skipped, saying why, where C++ does not compile).
func cxxObjectOf(t testing.TB, name, src string) string {
	t.Helper()
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name+".cc"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, name+".cc", name+".o", "-g", "-O0"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name+".o")
}

// TestTypesCxx: base classes, pointers to members, references,
// bitfields, static members skipped, nested names, arrays in C order.
func TestTypesCxx(t *testing.T) {
	d := openDebugT(t, cxxObject(t))
	found, err := d.FindStructs([][]string{{"app::holder"}})
	if err != nil || found[0] == nil {
		t.Fatalf("%v %v", found, err)
	}
	s, err := d.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "app::holder" {
		t.Errorf("name %q", s.Name)
	}
	var got []string
	for _, f := range s.Fields {
		d := typemodel.Decl(f.Type, f.Name)
		if f.BitSize > 0 {
			d += ":" + itoa(f.BitSize) + "@" + itoa(f.BitOffset)
		}
		if f.Base {
			d = "base " + f.Name
		}
		got = append(got, d+"@"+itoa(f.Offset))
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"base app::base@0", "int (*fp)(const char *, ...)@", "int app::point::*pm@", "int &(*rf)(void)@",
		"unsigned int bits:3@", "char grid[2][3]@", "struct app::holder::inner in@"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in\n%s", want, all)
		}
	}
	if strings.Contains(all, "counter") {
		t.Errorf("the static member is listed:\n%s", all)
	}
}

// BenchmarkAllTypes builds the whole graph of libc's debug file on one
// and two workers, with ScanAll (the index extract --all builds beside
// it) as the yardstick in the same run.
func BenchmarkAllTypes(b *testing.B) {
	for _, j := range []int{1, 2} {
		b.Run("j"+itoa(int64(j)), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				d := openDebugT(b, libcDebug)
				b.StartTimer()
				if _, err := d.AllTypes(context.Background(), j); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("scanall", func(b *testing.B) {
		d := openDebugT(b, libcDebug)
		for b.Loop() {
			if _, err := d.ScanAll(context.Background(), 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestAllTypesHugeJobs: -j is the user's number; a huge one starts no
// more workers than there are units.
func TestAllTypesHugeJobs(t *testing.T) {
	d := openDebugT(t, cxxObject(t))
	if _, err := d.AllTypes(context.Background(), 1<<62); err != nil {
		t.Fatal(err)
	}
}
