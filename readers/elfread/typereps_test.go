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
// (one worker sees every unit) and -j 2, on units made to be told apart
// and on libc's debug file (2063 units repeating their headers); the
// planted looser key, which takes function types of other parameters
// for one, is caught on the crafted units.
func TestRepsKeepWhatJoinKept(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	for name, text := range repsSources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
	for _, path := range paths {
		noReps = true
		want := dump(path, 1)
		noReps = false
		for _, jobs := range []int{1, 2} {
			if got := dump(path, jobs); got != want {
				t.Errorf("%s -j %d: the graph with repsOf differs from the one without (-j 1) at %s", path, jobs, firstDiff(want, got))
			}
		}
	}
	plantLooseReps = true
	defer func() { plantLooseReps = false }()
	noReps = true
	want := dump(lib, 1)
	noReps = false
	if got := dump(lib, 1); got == want {
		t.Error("the planted looser key was not caught: the graphs are the same")
	}
}
