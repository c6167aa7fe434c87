package elfread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// repsSources are three units that repeat one header's types and differ
// in what a looser key would take for equal: function types whose
// parameters, their order or "..." differ, arrays of other lengths (and
// of two dimensions, whose inner one no DIE stands for),
// qualifiers, typedefs of one name over other types.
var repsSources = map[string]string{
	"a.c": `typedef int (*cb_t)(int, long);
typedef unsigned long word;
struct a { cb_t f; const int *p; int arr[4]; volatile char c; int (*g)(void); word w; const int m[2][3]; };
struct a A;
`,
	"b.c": `typedef int (*cb_t)(long, int);
typedef unsigned int word;
struct b { cb_t f; const int *p; int arr[5]; const char c; int (*g)(); word w; const int m[3][2]; };
struct b B;
`,
	"c.c": `typedef int (*cb_t)(int, long);
typedef unsigned long word;
struct a { cb_t f; const int *p; int arr[4]; volatile char c; int (*g)(int, ...); word w; const int m[2][3]; };
struct a C;
`,
}

// TestRepsKeepWhatJoinKept: the graph AllTypes builds is the same with
// the workers' matching of repeated nodes (repsOf, and dropReps, which
// points the units at the matches and recycles the repeats) as without
// it, at -j 1 (one worker sees every unit) and -j 2 on units made to be
// told apart, and at -j 2 on libc's debug file (2063 units repeating their
// headers, where a worker's first of a kind need not be the one join
// keeps). On the crafted units it is the same again with every recycled
// node overwritten by a marker instead of reused, so that a reference
// left to one cannot pass unseen, and with one worker taking the units
// backwards; on both inputs, marked, through the one pass (ScanAllTypes),
// whose lister takes some units out of order (a match from a later unit
// changes libc's graph there). The planted looser key, which takes
// function types of other parameters for one, the planted dropReps, which
// leaves the units' members pointing at the repeats, and the planted
// repsOf that takes a match from a later unit (units built backwards), are
// caught on the crafted units.
func TestRepsKeepWhatJoinKept(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := sourcesDir(t, repsSources)
	lib := filepath.Join(dir, "libreps.so")
	// In this order: unit order decides which copy is kept.
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", lib, "a.c", "b.c", "c.c"); err != nil {
		t.Fatal(err)
	}
	paths := []string{lib}
	if _, err := os.Stat(libcDebug); err == nil {
		paths = append(paths, libcDebug)
	} else {
		t.Logf("libc's debug file is not installed (libc6-dbg): crafted units only: %v", err)
	}
	dump := func(path string, jobs int) string {
		t.Helper()
		saved := graphJobs
		graphJobs = jobs
		defer func() { graphJobs = saved }()
		return graphDump(t, path)
	}
	with := func(plant *bool, path string, jobs int) string {
		t.Helper()
		*plant = true
		defer func() { *plant = false }()
		return dump(path, jobs)
	}
	without := map[string]string{}
	for i, path := range paths {
		want := with(&noReps, path, 1)
		without[path] = want
		// libc (a graph of it is 3 s under -race) only at -j 2, and
		// only once marked: through the one pass, whose lister takes
		// some units out of order (the crafted units are built backwards
		// for that as well).
		jobs := []int{1, 2}
		if i > 0 {
			jobs = []int{2}
		}
		for _, j := range jobs {
			if got := dump(path, j); got != want {
				t.Errorf("%s -j %d: the graph with repsOf differs from the one without (-j 1) at %s", path, j, firstDiff(want, got))
			}
			if i == 0 {
				if got := with(&poisonRecycled, path, j); got != want {
					t.Errorf("%s -j %d: with the recycled nodes marked, the graph differs from the one without repsOf at %s", path, j, firstDiff(want, got))
				}
			}
		}
		if i == 0 {
			if got := with(&buildBackwards, path, 1); got != want {
				t.Errorf("%s: with the units built backwards, the graph differs from the one without repsOf at %s", path, firstDiff(want, got))
			}
		}
		poisonRecycled = true
		got := onePassGraph(t, path, 2)
		poisonRecycled = false
		if got != want {
			t.Errorf("%s: the one pass's graph, its recycled nodes marked, differs from the one without repsOf at %s", path, firstDiff(want, got))
		}
	}
	buildBackwards = true
	got := with(&plantLaterReps, lib, 1)
	buildBackwards = false
	if got == without[lib] {
		t.Error("the planted repsOf that takes a match from a later unit was not caught: the graphs are the same")
	}
	if with(&plantLooseReps, lib, 1) == without[lib] {
		t.Error("the planted looser key was not caught: the graphs are the same")
	}
	poisonRecycled = true
	got = with(&plantRepRefs, lib, 1)
	poisonRecycled = false
	if got == without[lib] {
		t.Error("the planted dropReps (members left at the recycled repeats) was not caught: the graphs are the same")
	} else if !strings.Contains(got, "<recycled>") {
		t.Errorf("the planted dropReps changed the graph without reaching a recycled node: %s", firstDiff(without[lib], got))
	}
}

// onePassGraph is the graph ScanAllTypes builds of path at -j jobs.
func onePassGraph(t *testing.T, path string, jobs int) string {
	t.Helper()
	_, g := onePass(t, path, jobs)
	return dumpGraph(g)
}
