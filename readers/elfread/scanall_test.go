package elfread

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// multiCUHeader is included by every unit of the multi-CU object, so its
// types are defined once per unit (the ODR duplicates the merge must pick
// the first of, in unit order).
const multiCUHeader = `#include <map>
#include <string>
#include <vector>
#include <memory>
namespace app {
struct point { int x, y; };
enum class color : unsigned char { red, green, blue };
typedef struct { long a; char b; } anon_t;
union u { int i; float f; };
template <typename T> struct box { T v; box<T>* next; };
struct holder { std::vector<point> pts; std::map<std::string, int> names; box<int> bi; color c; anon_t an; u un; };
}
`

// MultiCU builds (once per test binary) a shared object of nUnits C++
// units with g++ -g; unit 0 instantiates many more templates than the
// others, so it is scanned last of the first few when workers race.
func multiCU(t testing.TB) string {
	multiOnce.Do(func() { multiPath, multiErr = buildMultiCU() })
	if errors.Is(multiErr, errNoCxx) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	if multiErr != nil {
		t.Fatal(multiErr)
	}
	return multiPath
}

var (
	multiOnce sync.Once
	multiPath string
	multiErr  error
	errNoCxx  = errors.New("no C++ compiler")
	multiDir  string
)

const nUnits = 8

func buildMultiCU() (string, error) {
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		return "", errNoCxx
	}
	dir, err := tempDir("nrtabi-multicu")
	if err != nil {
		return "", err
	}
	multiDir = dir
	if err := writeFile(dir, "common.h", multiCUHeader); err != nil {
		return "", err
	}
	var srcs []string
	for i := range nUnits {
		var b strings.Builder
		fmt.Fprintf(&b, "#include \"common.h\"\nnamespace app { struct local%d { int v%d; box<double> b; std::unique_ptr<holder> h; }; }\n", i, i)
		fmt.Fprintf(&b, "int use%d(app::holder& h, app::local%d& l) { h.pts.push_back({%d,%d}); h.names[\"x\"] = %d; return (int)h.pts.size() + l.v%d; }\n", i, i, i, i, i, i)
		if i == 0 {
			for k := range 40 {
				fmt.Fprintf(&b, "struct big%d { std::map<long, std::vector<app::box<char[%d]>>> m; };\nint fill%d(big%d& x) { x.m[%d].push_back({}); return (int)x.m.size(); }\n", k, k+1, k, k, k)
			}
		}
		name := fmt.Sprintf("u%d.cc", i)
		if err := writeFile(dir, name, b.String()); err != nil {
			return "", err
		}
		srcs = append(srcs, name)
	}
	out := filepath.Join(dir, "libmulti.so")
	if err := cc.Run(dir, append([]string{"-g", "-O0", "-fPIC", "-shared", "-o", out}, srcs...)...); err != nil {
		return "", err
	}
	return out, nil
}

// renderIndex is every field of an Index, one line per type, so two
// indexes compare as text.
func renderIndex(idx *Index) string {
	var b strings.Builder
	fmt.Fprintf(&b, "units %d type units %d bytes %d duplicates %d anonymous %d nested %d qualified %d\n",
		idx.Units, idx.TypeUnits, idx.InfoBytes, idx.Duplicates, idx.Anonymous, idx.Nested, len(idx.Qualified))
	for _, t := range idx.Types {
		fmt.Fprintf(&b, "%s %q via %q at %#x (DIE %#x of %s, %s) size %d %v\n", t.Kind, t.Name, t.Via, t.Offset, t.DIE, t.File, t.From, t.Size, t.Sized)
	}
	for _, t := range idx.Later {
		first := "none"
		if t.First != nil {
			first = fmt.Sprintf("%s %q at %#x", t.First.Kind, t.First.Name, t.First.Offset)
		}
		fmt.Fprintf(&b, "later %s %q via %q at %#x size %d %v first %s\n", t.Kind, t.Name, t.Via, t.Offset, t.Size, t.Sized, first)
	}
	return b.String()
}

func scanAll(t *testing.T, path string, jobs int) string {
	t.Helper()
	d, err := OpenDebug(context.Background(), path, Lookup{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	idx, err := d.ScanAll(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	return renderIndex(idx)
}

// TestScanAllSameForAnyJobs: the index of a multi-CU C++ object is the
// same text for -j 1, 2 and 8; with the merge planted to take the workers'
// completion order, it is not (the test would not notice a merge that
// depends on timing otherwise).
func TestScanAllSameForAnyJobs(t *testing.T) {
	path := multiCU(t)
	want := scanAll(t, path, 1)
	for _, frag := range []string{`struct "app::point"`, `enum "app::color"`, `struct "app::anon_t" via "typedef app::anon_t"`, `union "app::u"`, `struct "app::box<int>"`, `struct "big39"`} {
		if !strings.Contains(want, frag) {
			t.Fatalf("the index lacks %s:\n%.3000s", frag, want)
		}
	}
	if strings.Contains(want, "_Alloc_hider") {
		t.Errorf("a type nested in a class is listed (check cannot look it up):\n%.2000s", want)
	}
	if !strings.Contains(want, fmt.Sprintf("units %d ", nUnits)) || strings.Contains(want, "duplicates 0 ") {
		t.Fatalf("want %d units and the header's types counted as duplicates:\n%.300s", nUnits, want)
	}
	for _, j := range []int{2, 8} {
		if got := scanAll(t, path, j); got != want {
			t.Fatalf("-j %d gives another index than -j 1:\n%s", j, firstDiff(want, got))
		}
	}
	plantCompletionOrder = true
	defer func() { plantCompletionOrder = false }()
	// Completion order follows the workers' timing, so the planted fault
	// shows in some runs only; it must show in one of these.
	for try := 0; try < 20; try++ {
		if got := scanAll(t, path, 8); got != want {
			t.Logf("planted completion-order merge caught on try %d: %s", try+1, firstDiff(want, got))
			return
		}
		runtime.Gosched()
	}
	t.Fatal("a merge in completion order went unnoticed in 20 runs at -j 8")
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  -j 1: %s\n  here: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}

// TestScanAllRefusesNoWorkers: -j 0 is refused by name, before anything
// is read.
func TestScanAllRefusesNoWorkers(t *testing.T) {
	path := multiCU(t)
	d, err := OpenDebug(context.Background(), path, Lookup{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, j := range []int{0, -3} {
		if _, err := d.ScanAll(context.Background(), j); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("-j %d: the number of workers is at least 1", j)) {
			t.Errorf("ScanAll(-j %d): %v, want the refusal naming -j", j, err)
		}
	}
}

// TestScanAllCancelled: a cancelled context ends the scan with its error.
func TestScanAllCancelled(t *testing.T) {
	path := multiCU(t)
	d, err := OpenDebug(context.Background(), path, Lookup{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.ScanAll(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("ScanAll with a cancelled context: %v", err)
	}
}

// BenchmarkScanAll is the parallel scan of the multi-CU object, or of
// $NRTABI_BENCH_INPUT (bench/layoutcheck's 102 MiB synthetic object, a
// libstdc++ debug file), at -j 1 and -j 2; it reports MiB of .debug_info
// per second.
func BenchmarkScanAll(b *testing.B) {
	path := benchInput(b)
	d, err := OpenDebug(context.Background(), path, Lookup{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for _, j := range []int{1, 2} {
		b.Run(fmt.Sprintf("j%d", j), func(b *testing.B) {
			var info int64
			for b.Loop() {
				idx, err := d.ScanAll(context.Background(), j)
				if err != nil {
					b.Fatal(err)
				}
				info = idx.InfoBytes
			}
			b.SetBytes(info)
		})
	}
}

// BenchmarkScanAllMerge is the merge alone: the per-unit results of one
// scan put in unit order, duplicates dropped.
func BenchmarkScanAllMerge(b *testing.B) {
	path := benchInput(b)
	d, err := OpenDebug(context.Background(), path, Lookup{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if _, err := d.ScanAll(context.Background(), 1); err != nil {
		b.Fatal(err)
	}
	var items []scanItem
	var res []unitTypes
	var order []int
	for _, p := range d.all() {
		for i := range p.units {
			u := &p.units[i]
			if u.typeUnit {
				continue
			}
			items = append(items, scanItem{p: p, u: u, index: len(items)})
			res = append(res, (&scanner{d: p}).unitTypes(u))
			order = append(order, len(order))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := (&Index{}).merge(items, res, order); err != nil {
			b.Fatal(err)
		}
	}
}

// benchInput is $NRTABI_BENCH_INPUT, else the multi-CU object.
func benchInput(b *testing.B) string {
	if p := os.Getenv("NRTABI_BENCH_INPUT"); p != "" {
		return p
	}
	return multiCU(b)
}

func tempDir(pattern string) (string, error) { return os.MkdirTemp("", pattern) }

// TestScanAllTruncatedWhileReading: a file truncated after Open, past its
// first unit's header, faults in a worker of ScanAll, not in the caller's
// goroutine; the worker's own Guard makes it the *InputError naming the
// file (without it the process dies with "fatal error: fault").
func TestScanAllTruncatedWhileReading(t *testing.T) {
	path := manyPagesObject(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dbg, err := FindDebug(context.Background(), f, Lookup{})
	if err != nil {
		t.Fatal(err)
	}
	info := f.File.Section(".debug_info")
	if info == nil || info.Size < 3*4096 {
		t.Fatalf("want a .debug_info of several pages: %v", info)
	}
	// The unit header's page stays; the DIEs after it are gone.
	if err := os.Truncate(path, int64((info.Offset+64+4095)/4096*4096)); err != nil {
		t.Fatal(err)
	}
	_, err = dbg.ScanAll(context.Background(), 2)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Path != path || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("want an InputError naming %s, got %v", path, err)
	}
}
