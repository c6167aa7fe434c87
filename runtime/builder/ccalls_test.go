package builder

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// The C files of the reference libnccom call each other in layers: a file
// calls into files below it and never, through any chain, back into
// itself, so each file can be read knowing only what is under it (the
// style of NCCL's bootstrap.cc over its socket layer). The test compiles
// each file to an object through the one toolchain path, reads what each
// defines and what it leaves undefined with debug/elf, and fails naming
// any cycle of the file -> file graph that results.

// cFile is one compiled C file: the global symbols it defines and those it
// needs from elsewhere.
type cFile struct {
	name           string
	defines, needs []string
}

// compileFiles compiles every .c under dir alone to an object in out with
// flags and reads its symbols.
func compileFiles(ctx context.Context, dir, out string, flags []string) ([]cFile, error) {
	srcs, err := filepath.Glob(filepath.Join(dir, "*.c"))
	if err != nil {
		return nil, err
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("no C files under %s", dir)
	}
	sort.Strings(srcs)
	var files []cFile
	for _, src := range srcs {
		obj := filepath.Join(out, strings.TrimSuffix(filepath.Base(src), ".c")+".o")
		if err := cc.ObjectContext(ctx, out, src, obj, flags...); err != nil {
			return nil, err
		}
		f, err := readObject(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		f.name = filepath.Base(src)
		files = append(files, f)
	}
	return files, nil
}

// readObject is the global symbols an object defines and those it leaves
// undefined.
func readObject(path string) (cFile, error) {
	ef, err := elf.Open(path)
	if err != nil {
		return cFile{}, err
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		return cFile{}, err
	}
	var f cFile
	for _, s := range syms {
		b := elf.ST_BIND(s.Info)
		if s.Name == "" || (b != elf.STB_GLOBAL && b != elf.STB_WEAK) {
			continue
		}
		if s.Section == elf.SHN_UNDEF {
			f.needs = append(f.needs, s.Name)
		} else {
			f.defines = append(f.defines, s.Name)
		}
	}
	return f, nil
}

// callGraph is, for each file, the files it calls and, for each of those,
// the first symbol (by name) that makes the edge. Symbols no file defines
// (libc, libnrt) make none.
func callGraph(files []cFile) map[string]map[string]string {
	owner := map[string]string{}
	for _, f := range files {
		for _, s := range f.defines {
			owner[s] = f.name
		}
	}
	g := map[string]map[string]string{}
	for _, f := range files {
		g[f.name] = map[string]string{}
		for _, s := range f.needs {
			to, ok := owner[s]
			if !ok || to == f.name {
				continue
			}
			if old, seen := g[f.name][to]; !seen || s < old {
				g[f.name][to] = s
			}
		}
	}
	return g
}

// callCycles reports one line per strongly connected set of two or more
// files: the files, and one cycle through them with the symbol of each
// step. Sorted, so a report is the same from run to run.
func callCycles(g map[string]map[string]string) []string {
	nodes := make([]string, 0, len(g))
	for n := range g {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	succ := func(n string) []string {
		var out []string
		for m := range g[n] {
			out = append(out, m)
		}
		sort.Strings(out)
		return out
	}
	// Tarjan's strongly connected components, iterative so a long chain of
	// files cannot exhaust the stack.
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var sccs [][]string
	next := 0
	type frame struct {
		n    string
		succ []string
		i    int
	}
	for _, root := range nodes {
		if _, done := index[root]; done {
			continue
		}
		work := []frame{{n: root, succ: succ(root)}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			top := &work[len(work)-1]
			if top.i < len(top.succ) {
				m := top.succ[top.i]
				top.i++
				if _, seen := index[m]; !seen {
					index[m], low[m] = next, next
					next++
					stack = append(stack, m)
					onStack[m] = true
					work = append(work, frame{n: m, succ: succ(m)})
				} else if onStack[m] {
					low[top.n] = min(low[top.n], index[m])
				}
				continue
			}
			n := top.n
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1].n
				low[p] = min(low[p], low[n])
			}
			if low[n] != index[n] {
				continue
			}
			var scc []string
			for {
				m := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[m] = false
				scc = append(scc, m)
				if m == n {
					break
				}
			}
			if len(scc) > 1 {
				sort.Strings(scc)
				sccs = append(sccs, scc)
			}
		}
	}
	var out []string
	for _, scc := range sccs {
		out = append(out, fmt.Sprintf("a call cycle between the C files %s: %s; move what they share down into a file of its own that calls neither",
			strings.Join(scc, ", "), cycleThrough(g, scc)))
	}
	sort.Strings(out)
	return out
}

// cycleThrough is the shortest cycle from scc's first file back to it,
// inside scc, as "a.c -> b.c (sym) -> a.c (sym)".
func cycleThrough(g map[string]map[string]string, scc []string) string {
	in := map[string]bool{}
	for _, n := range scc {
		in[n] = true
	}
	start := scc[0]
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 && prev[start] == "" {
		n := queue[0]
		queue = queue[1:]
		var tos []string
		for m := range g[n] {
			tos = append(tos, m)
		}
		sort.Strings(tos)
		for _, m := range tos {
			if !in[m] || prev[m] != "" {
				continue
			}
			prev[m] = n
			if m == start {
				break
			}
			queue = append(queue, m)
		}
	}
	path := []string{start}
	for n := prev[start]; n != start; n = prev[n] {
		path = append(path, n)
	}
	path = append(path, start)
	slices.Reverse(path)
	var b strings.Builder
	b.WriteString(path[0])
	for i := 1; i < len(path); i++ {
		fmt.Fprintf(&b, " -> %s (%s)", path[i], g[path[i-1]][path[i]])
	}
	return b.String()
}

// TestLibnccomCallLayers: the reference libnccom's C files, compiled as the
// build compiles them (the fault hooks in, so their calls count too), call
// each other without a cycle.
func TestLibnccomCallLayers(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler, so no objects to read: %v", err)
	}
	tr := open(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	files, err := compileFiles(ctx, tr.LibnccomSourceDir(), t.TempDir(), tr.libnccomCFlags(Libnccom{Faults: true}))
	if err != nil {
		t.Fatal(err)
	}
	g := callGraph(files)
	edges := 0
	for _, tos := range g {
		edges += len(tos)
	}
	// A graph of one file or no calls would pass without showing anything.
	if len(files) < 2 || edges == 0 {
		t.Fatalf("%d C files with %d calls between them under %s: nothing was checked", len(files), edges, tr.LibnccomSourceDir())
	}
	t.Logf("%d C files, %d file -> file calls", len(files), edges)
	for _, c := range callCycles(g) {
		t.Error(c)
	}
}

// TestCallCycleCaught: two tiny C files that call each other, beside a
// third both call, are reported as one cycle naming both files and the
// symbols; the third, below them, is in no cycle.
func TestCallCycleCaught(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler, so no objects to read: %v", err)
	}
	dir := t.TempDir()
	srcs := map[string]string{
		"ping.c":  "int pong(int);\nint floor_f(int);\nint ping(int n) { return n > 0 ? pong(n - 1) + floor_f(n) : 0; }\n",
		"pong.c":  "int ping(int);\nint floor_f(int);\nint pong(int n) { return n > 0 ? ping(n - 1) + floor_f(n) : 1; }\n",
		"floor.c": "int floor_f(int n) { return n * 2; }\n",
	}
	for name, text := range srcs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	files, err := compileFiles(ctx, dir, t.TempDir(), cc.Strict)
	if err != nil {
		t.Fatal(err)
	}
	got := callCycles(callGraph(files))
	want := "a call cycle between the C files ping.c, pong.c: ping.c -> pong.c (pong) -> ping.c (ping)"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Fatalf("want one report starting %q, got %q", want, got)
	}
	if strings.Contains(got[0], "floor.c") {
		t.Errorf("floor.c is called by both but calls neither, so it is in no cycle: %q", got[0])
	}
	// The same files without the call back are layers: no report.
	srcs["pong.c"] = "int floor_f(int);\nint pong(int n) { return floor_f(n); }\n"
	if err := os.WriteFile(filepath.Join(dir, "pong.c"), []byte(srcs["pong.c"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if files, err = compileFiles(ctx, dir, t.TempDir(), cc.Strict); err != nil {
		t.Fatal(err)
	}
	if got := callCycles(callGraph(files)); len(got) != 0 {
		t.Errorf("ping.c -> pong.c -> floor.c has no cycle, got %q", got)
	}
}

// TestCallCyclesLongChain: a cycle of three files is found whole, and a
// chain of many files (deeper than a recursive search would like) has none.
func TestCallCyclesLongChain(t *testing.T) {
	g := map[string]map[string]string{
		"a.c": {"b.c": "b"}, "b.c": {"c.c": "c"}, "c.c": {"a.c": "a"}, "d.c": {"a.c": "a"},
	}
	got := callCycles(g)
	want := "a call cycle between the C files a.c, b.c, c.c: a.c -> b.c (b) -> c.c (c) -> a.c (a)"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("want %q, got %q", want, got)
	}
	chain := map[string]map[string]string{}
	for i := 0; i < 100000; i++ {
		chain[fmt.Sprintf("f%06d.c", i)] = map[string]string{fmt.Sprintf("f%06d.c", i+1): "s"}
	}
	chain["f100000.c"] = map[string]string{}
	if got := callCycles(chain); len(got) != 0 {
		t.Errorf("a chain has no cycle, got %d reports", len(got))
	}
}
