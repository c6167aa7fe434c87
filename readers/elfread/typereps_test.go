package elfread

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// repsSources are three units that repeat one header's types and differ
// in what a looser key would take for equal: function types whose
// parameters, their order or "..." differ, arrays of other lengths,
// qualifiers, typedefs of one name over other types.
var repsSources = map[string]string{
	"a.c": `typedef int (*cb_t)(int, long);
typedef unsigned long word;
struct a { cb_t f; const int *p; int arr[4]; volatile char c; int (*g)(void); word w; };
struct a A;
`,
	"b.c": `typedef int (*cb_t)(long, int);
typedef unsigned int word;
struct b { cb_t f; const int *p; int arr[5]; const char c; int (*g)(); word w; };
struct b B;
`,
	"c.c": `typedef int (*cb_t)(int, long);
typedef unsigned long word;
struct a { cb_t f; const int *p; int arr[4]; volatile char c; int (*g)(int, ...); word w; };
struct a C;
`,
}

// TestRepsKeepWhatJoinKept: the graph AllTypes builds is the same with
// the workers' matching of repeated nodes (repsOf) as without it, at -j 1
// (one worker sees every unit) and -j 2 on units made to be told apart,
// and at -j 2 on libc's debug file (2063 units repeating their headers).
// The planted looser key, which takes function types of other parameters
// for one, is caught on the crafted units, and the planted join, which
// keeps a repeated node as its match itself, on libc.
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
	without := map[string]string{}
	for i, path := range paths {
		noReps = true
		want := dump(path, 1)
		noReps = false
		without[path] = want
		// libc (a graph of it is 3 s under -race) only at -j 2:
		// where two workers share the units, a worker's first of a kind
		// need not be the one join keeps, and a join that took the match
		// itself for what it was kept as is caught there (not on the
		// crafted units, nor at -j 1, where the two are one node).
		jobs := []int{1, 2}
		if i > 0 {
			jobs = []int{2}
		}
		for _, j := range jobs {
			if got := dump(path, j); got != want {
				t.Errorf("%s -j %d: the graph with repsOf differs from the one without (-j 1) at %s", path, j, firstDiff(want, got))
			}
		}
	}
	planted := func(plant *bool, path string, jobs int) string {
		t.Helper()
		*plant = true
		defer func() { *plant = false }()
		return dump(path, jobs)
	}
	if planted(&plantLooseReps, lib, 1) == without[lib] {
		t.Error("the planted looser key was not caught: the graphs are the same")
	}
	if len(paths) < 2 {
		t.Log("the planted join (the match kept as itself) needs libc's units shared by two workers: not tried")
		return
	}
	if planted(&plantRepItself, libcDebug, 2) == without[libcDebug] {
		t.Error("the planted join (a repeated node kept as its match itself) was not caught: the graphs are the same")
	}
}
