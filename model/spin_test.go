package model

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/gen"
)

// full is `make model`: every release and the full bounds. Without it the
// tests use bounds that finish in well under a minute on two cores.
var full = os.Getenv("NRTABI_MODEL") == "full"

// spinResult is what one pan run reported.
type spinResult struct {
	states     int64
	depth      int64
	errors     int64
	seconds    float64
	violations []string // distinct, in the order pan found them
	trail      string   // the replayed counterexample, when there is one
}

var (
	reErrors   = regexp.MustCompile(`depth reached (\d+), errors: (\d+)`)
	reStates   = regexp.MustCompile(`(\d+) states, stored`)
	reElapsed  = regexp.MustCompile(`elapsed time ([0-9.e+]+) seconds`)
	reViolated = regexp.MustCompile(`pan:\d+: (.*?) \(at depth \d+\)`)
)

// needSpin skips the test, saying why, when spin or a C compiler is absent.
func needSpin(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"spin", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian: apt-get install spin gcc); the models are not checked", tool)
		}
	}
}

// workDir is a fresh directory holding the models and, as zspec.pml, the
// given generated header.
func workDir(t *testing.T, header []byte) string {
	t.Helper()
	dir := t.TempDir()
	models, err := filepath.Glob("*.pml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range models {
		if strings.HasPrefix(m, "zspec") {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "zspec.pml"), header, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func command(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// check runs spin -a, cc and pan on model with the -D definitions defs in
// its own copy of dir, looking for every error (-c0); when there is one it
// runs pan again to its first error and replays the trail with spin -t.
func check(t *testing.T, dir, model string, defs ...string) spinResult {
	t.Helper()
	sub, err := os.MkdirTemp(dir, "run")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{model, "zspec.pml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	command(t, sub, "spin", append(append([]string{}, defs...), "-a", model)...)
	ccFlags := []string{"-O0", "-w", "-DSAFETY", "-o", "pan", "pan.c"}
	if full {
		ccFlags = []string{"-O2", "-w", "-DSAFETY", "-DCOLLAPSE", "-o", "pan", "pan.c"}
	}
	command(t, sub, "cc", ccFlags...)
	out := command(t, sub, "./pan", "-m100000", "-c0")
	if strings.Contains(out, "max search depth too small") || strings.Contains(out, "VECTORSZ") {
		t.Fatalf("pan %s %v: the search was cut short:\n%s", model, defs, out)
	}
	var r spinResult
	m := reErrors.FindStringSubmatch(out)
	s := reStates.FindStringSubmatch(out)
	if m == nil || s == nil {
		t.Fatalf("pan %s %v: no summary in its output:\n%s", model, defs, out)
	}
	r.depth, _ = strconv.ParseInt(m[1], 10, 64)
	r.errors, _ = strconv.ParseInt(m[2], 10, 64)
	r.states, _ = strconv.ParseInt(s[1], 10, 64)
	if e := reElapsed.FindStringSubmatch(out); e != nil {
		r.seconds, _ = strconv.ParseFloat(e[1], 64)
	}
	seen := map[string]bool{}
	for _, v := range reViolated.FindAllStringSubmatch(out, -1) {
		if !seen[v[1]] {
			seen[v[1]] = true
			r.violations = append(r.violations, v[1])
		}
	}
	if r.errors > 0 {
		command(t, sub, "./pan", "-m100000")
		if _, err := os.Stat(filepath.Join(sub, model+".trail")); err != nil {
			t.Fatalf("pan %s %v found %d errors but wrote no trail: %v", model, defs, r.errors, err)
		}
		r.trail = command(t, sub, "spin", append(append([]string{}, defs...), "-t", "-p", model)...)
	}
	return r
}

func (r spinResult) String() string {
	return fmt.Sprintf("%d states, depth %d, %.2f s, %d errors", r.states, r.depth, r.seconds, r.errors)
}

// parallel runs one spin check as a parallel subtest named after its
// definitions (the two cores run two pans at once).
func parallel(t *testing.T, defs []string, f func(t *testing.T)) {
	t.Helper()
	t.Run(strings.Join(defs, " "), func(t *testing.T) {
		t.Parallel()
		f(t)
	})
}

// holds runs a model that must satisfy every property.
func holds(t *testing.T, dir, model string, defs ...string) {
	t.Helper()
	r := check(t, dir, model, defs...)
	t.Logf("%s %s: %v", model, strings.Join(defs, " "), r)
	if r.errors != 0 {
		t.Errorf("%s %v: spin found %d errors: %s\n%s", model, defs, r.errors, strings.Join(r.violations, "; "), r.trail)
	}
}

// rejected runs a model that spin must reject with a counterexample trail
// showing the violation want (a substring of pan's report).
func rejected(t *testing.T, dir, model, want string, defs ...string) {
	t.Helper()
	r := check(t, dir, model, defs...)
	t.Logf("%s %s: %v: %s", model, strings.Join(defs, " "), r, strings.Join(r.violations, "; "))
	if r.errors == 0 {
		t.Errorf("%s %v: spin accepted a model it must reject (%s)", model, defs, want)
		return
	}
	found := false
	for _, v := range r.violations {
		found = found || strings.Contains(v, want)
	}
	if !found {
		t.Errorf("%s %v: spin found %s, not %q", model, defs, strings.Join(r.violations, "; "), want)
	}
	if !strings.Contains(r.trail, "trail ends after") && !strings.Contains(r.trail, "violated") {
		t.Errorf("%s %v: the trail does not replay:\n%s", model, defs, r.trail)
	}
}

// headers are the generated headers the models are checked against: the
// default release's, and in full mode every release's.
func headers(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(gen.PromelaHeaderName("*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s in model/: run `make generate`", gen.PromelaHeaderName("*"))
	}
	hs := map[string][]byte{}
	for _, f := range files {
		release := strings.TrimSuffix(strings.TrimPrefix(f, "zspec_"), ".pml")
		if !full && f != gen.PromelaHeaderName(defaultRelease) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hs[release] = data
	}
	return hs
}

const invalidEnd = "invalid end state"

func TestHandoff(t *testing.T) {
	needSpin(t)
	callers := "-DCALLERS=2"
	if full {
		callers = "-DCALLERS=3"
	}
	for release, h := range headers(t) {
		t.Run(release, func(t *testing.T) {
			dir := workDir(t, h)
			parallel(t, []string{callers}, func(t *testing.T) { holds(t, dir, "handoff.pml", callers) })
			for bug, want := range map[string]string{
				"BUG_PUBLISH_BEFORE_COMPAT": "nvalid==0",
				"BUG_KEEP_ON_MISSING":       "nvalid==0",
				"BUG_CLEAR_SENTINEL":        "!(sentinel_cleared)",
				"BUG_DONE_BEFORE_RUN":       "slot[k]",
				"BUG_RACY_ONCE":             "runs==1",
			} {
				defs := []string{"-DCALLERS=2", "-D" + bug}
				parallel(t, defs, func(t *testing.T) { rejected(t, dir, "handoff.pml", want, defs...) })
			}
		})
	}
}

// modelWorlds checks model against every release's header: each of worlds
// (its -D definitions) must hold, and each planted bug, defined on top of
// bugWorld, must be rejected with the violation it maps to.
func modelWorlds(t *testing.T, model string, worlds [][]string, bugWorld []string, bugs map[string]string) {
	t.Helper()
	needSpin(t)
	for release, h := range headers(t) {
		t.Run(release, func(t *testing.T) {
			dir := workDir(t, h)
			for _, defs := range worlds {
				parallel(t, defs, func(t *testing.T) { holds(t, dir, model, defs...) })
			}
			for bug, want := range bugs {
				defs := append(append([]string{}, bugWorld...), "-D"+bug)
				parallel(t, defs, func(t *testing.T) { rejected(t, dir, model, want, defs...) })
			}
		})
	}
}

func TestPerNCBootstrap(t *testing.T) {
	maxN := 6
	if full {
		maxN = 8
	}
	var worlds [][]string
	for n := 1; n <= maxN; n++ {
		worlds = append(worlds, []string{fmt.Sprintf("-DNRANKS=%d", n)})
	}
	modelWorlds(t, "pernc.pml", worlds, []string{"-DNRANKS=4"}, map[string]string{
		"BUG_SKIP_AND":       "(fault!=1)||(result[i]==2)",
		"BUG_BCAST_SHORT":    invalidEnd,
		"BUG_LOCAL_VERDICT":  "split||(result[i]==first)",
		"BUG_NO_CLOSE":       invalidEnd,
		"BUG_UID_NOT_COPIED": "uid==7",
		// not a bug: the documented limit of a one-shot broadcast
		"CHECK_SPLIT": "split||(result[i]==first)",
	})
}

// TestPerNCHier checks the per-NC exchanges over the instances
// (pernchier.pml, spec extension agree-exchange-hier): every world of up to
// five ranks (seven in full mode) with every instance size, six ranks with
// L = 2 and 4, and each planted bug rejected.
func TestPerNCHier(t *testing.T) {
	maxN := 6
	if full {
		maxN = 7
	}
	var worlds [][]string
	for n := 1; n <= maxN; n++ {
		for l := 1; l <= n; l++ {
			// the largest worlds take a few seconds each: in the default
			// bounds only a full last instance and a short one
			if n == maxN && !full && l != 2 && l != 4 {
				continue
			}
			worlds = append(worlds, []string{fmt.Sprintf("-DNRANKS=%d", n), fmt.Sprintf("-DPER_INSTANCE=%d", l)})
		}
	}
	modelWorlds(t, "pernchier.pml", worlds, []string{"-DNRANKS=4", "-DPER_INSTANCE=2"}, map[string]string{
		"BUG_SKIP_AND":       "(fault!=1)||(result[i]==2)",
		"BUG_EARLY_FORWARD":  "(fault!=1)||(result[i]==2)",
		"BUG_LEADER_OWN_UID": "uid==7",
		"BUG_DOWN_SHORT":     invalidEnd,
		"BUG_LOCAL_VERDICT":  "split||(result[i]==first)",
		"BUG_NO_CLOSE":       invalidEnd,
		"BUG_OWN_SHAPE":      "who==r",
		// not a bug: the documented limit of a one-shot broadcast
		"CHECK_SPLIT": "split||(result[i]==first)",
	})
}

func TestFlatBootstrap(t *testing.T) {
	needSpin(t)
	maxN := 3
	if full {
		maxN = 4
	}
	for release, h := range headers(t) {
		t.Run(release, func(t *testing.T) {
			dir := workDir(t, h)
			for n := 2; n <= maxN; n++ {
				for _, mode := range [][]string{nil, {"-DEXTENDED"}} {
					defs := append([]string{fmt.Sprintf("-DNRANKS=%d", n)}, mode...)
					parallel(t, defs, func(t *testing.T) { holds(t, dir, "flat.pml", defs...) })
				}
			}
			for _, v := range []struct{ want, mode, bug string }{
				{"have==", "", "BUG_SHORT_GATHER"},
				{"have==", "EXTENDED", "BUG_SHORT_GATHER"},
				{invalidEnd, "EXTENDED", "BUG_NO_PROPAGATE"},
				{invalidEnd, "EXTENDED", "BUG_ROOT_KEEPS_ABORT"},
				{"result[i]==first", "EXTENDED", "BUG_NO_COMPLETE"},
				// not a bug: upstream NCCL's default mode does not agree
				{"result[i]==first", "", "CHECK_AGREEMENT"},
			} {
				defs := []string{"-DNRANKS=3", "-D" + v.bug}
				if v.mode != "" {
					defs = append(defs, "-D"+v.mode)
				}
				parallel(t, defs, func(t *testing.T) { rejected(t, dir, "flat.pml", v.want, defs...) })
			}
		})
	}
}

// hierWorlds are the (ranks, ranks per instance) shapes the hierarchical
// model is checked at: flat by dispatch (n <= l), one rank per instance,
// even instances and a short last instance.
func hierWorlds() (plain, faults [][2]int) {
	plain = [][2]int{{2, 2}, {3, 1}, {3, 2}, {4, 2}}
	faults = [][2]int{{2, 1}, {3, 2}}
	if full {
		plain = append(plain, [][2]int{{3, 3}, {4, 3}, {5, 2}}...)
		faults = append(faults, [][2]int{{3, 1}, {4, 2}}...)
	}
	return plain, faults
}

func hierDefs(n, l int, more ...string) []string {
	return append([]string{fmt.Sprintf("-DNRANKS=%d", n), fmt.Sprintf("-DPER_INSTANCE=%d", l)}, more...)
}

func TestHierBootstrap(t *testing.T) {
	needSpin(t)
	plain, faults := hierWorlds()
	for release, h := range headers(t) {
		t.Run(release, func(t *testing.T) {
			dir := workDir(t, h)
			for _, w := range plain {
				defs := hierDefs(w[0], w[1])
				parallel(t, defs, func(t *testing.T) { holds(t, dir, "hier.pml", defs...) })
			}
			for _, w := range faults {
				defs := hierDefs(w[0], w[1], "-DFAULTS")
				parallel(t, defs, func(t *testing.T) { holds(t, dir, "hier.pml", defs...) })
			}
			// Each bug at the smallest world where it changes what happens:
			// a leader's repeated block needs three instances, a wrong slice
			// an instance of three, a dropped or mis-sized instance a short one.
			for _, v := range []struct {
				n, l      int
				bug, want string
			}{
				{3, 1, "BUG_LEADER_TWICE", "(fault!=0)||(result[i]==1)"},
				{3, 2, "BUG_NONLEADER_INTER", "(osucc!=255)&&((known&(1<<osucc))!=0)"},
				{3, 2, "BUG_SPLIT_OFF_BY_ONE", "have==((1<<3)-1)"},
				{4, 3, "BUG_INTRA_SLICE", "(have&(1<<"},
				{3, 2, "BUG_DOWN_SKIP_LAST", invalidEnd},
				{3, 2, "BUG_EVEN_LOCAL_N", "(fault!=0)||(result[i]==1)"},
			} {
				defs := hierDefs(v.n, v.l, "-D"+v.bug)
				parallel(t, defs, func(t *testing.T) { rejected(t, dir, "hier.pml", v.want, defs...) })
			}
		})
	}
}

// TestBidiRing checks the bidirectional ring all-gather and broadcast down
// (bidi.pml) on rings of 2..4 members (5 in full mode), with one member
// dying anywhere, and rejects each planted bug at the smallest ring where
// it changes what happens. Cost: about 2 s of pan on two cores.
func TestBidiRing(t *testing.T) {
	needSpin(t)
	maxN, faultN := 4, []int{3, 4}
	if full {
		maxN, faultN = 5, []int{2, 3, 4, 5}
	}
	for release, h := range headers(t) {
		t.Run(release, func(t *testing.T) {
			dir := workDir(t, h)
			for n := 2; n <= maxN; n++ {
				defs := []string{fmt.Sprintf("-DNRANKS=%d", n)}
				parallel(t, defs, func(t *testing.T) { holds(t, dir, "bidi.pml", defs...) })
			}
			for _, n := range faultN {
				defs := []string{fmt.Sprintf("-DNRANKS=%d", n), "-DFAULTS"}
				parallel(t, defs, func(t *testing.T) { holds(t, dir, "bidi.pml", defs...) })
			}
			bugs := []struct {
				n         int
				bug, want string
			}{
				{3, "BUG_BIDI_ONE_WAY", "v==(((r+i)+1)%3)"},
				{2, "BUG_BIDI_CEIL_BOTH", "(have&(1<<v))==0"},
				{4, "BUG_BIDI_CEIL_BOTH", "(have&(1<<v))==0"},
				{2, "BUG_BIDI_FLOOR_BOTH", "have==((1<<2)-1)"},
				{4, "BUG_BIDI_FLOOR_BOTH", "have==((1<<4)-1)"},
				{3, "BUG_BIDI_SERIAL", invalidEnd},
				{3, "BUG_DOWN_BOTH_FULL", "downs[r]==1"},
			}
			if full {
				// below 5 members the counter-clockwise stream only ever
				// sends the member's own record, which both slices name
				bugs = append(bugs, struct {
					n         int
					bug, want string
				}{5, "BUG_BIDI_SAME_SLICE", "(have&(1<<v))==0"})
			}
			for _, v := range bugs {
				defs := []string{fmt.Sprintf("-DNRANKS=%d", v.n), "-D" + v.bug}
				parallel(t, defs, func(t *testing.T) { rejected(t, dir, "bidi.pml", v.want, defs...) })
			}
		})
	}
}

func rootsDefs(n, roots int, more ...string) []string {
	return append([]string{fmt.Sprintf("-DNRANKS=%d", n), fmt.Sprintf("-DROOTS=%d", roots)}, more...)
}

// TestRingOfRoots checks the multi-root bootstrap and its fast failure
// (roots.pml): balanced contiguous ranges, the roots' ring (range, first,
// cluster), one ring of N, abort frames on every ring link; every fault
// at (2, 2) and (3, 1) (also (3, 2) in full mode); each planted bug at its
// smallest world. Cost: about 5 s of pan on two cores.
func TestRingOfRoots(t *testing.T) {
	needSpin(t)
	plain := [][2]int{{2, 1}, {2, 2}, {3, 2}}
	faults := [][2]int{{2, 2}, {3, 1}}
	if full {
		plain = append(plain, [][2]int{{4, 2}, {3, 3}}...)
		faults = append(faults, [][2]int{{3, 2}}...)
	}
	for release, h := range headers(t) {
		t.Run(release, func(t *testing.T) {
			dir := workDir(t, h)
			for _, w := range plain {
				defs := rootsDefs(w[0], w[1])
				parallel(t, defs, func(t *testing.T) { holds(t, dir, "roots.pml", defs...) })
			}
			for _, w := range faults {
				defs := rootsDefs(w[0], w[1], "-DFAULTS")
				parallel(t, defs, func(t *testing.T) { holds(t, dir, "roots.pml", defs...) })
			}
			for _, v := range []struct {
				n, roots  int
				bug, want string
				more      []string
			}{
				{3, 2, "BUG_SPLIT_FLOOR", "(fault!=0)||(result[i]==1)", nil},
				{2, 2, "BUG_LAST_NEXT_OWN_FIRST", "from==", nil},
				{2, 2, "BUG_REPLY_BEFORE_FIRST", "knownfirst", nil},
				{2, 2, "BUG_NO_ROOT_CLOSE", invalidEnd, []string{"-DFAULTS"}},
				// rank 0 dies before it dials: rank 1 waits to accept it and
				// hears of it only on its other link, from rank 2
				{3, 1, "BUG_READ_ONE_LINK", invalidEnd, []string{"-DFAULTS", "-DVICTIM=0"}},
			} {
				defs := rootsDefs(v.n, v.roots, append([]string{"-D" + v.bug}, v.more...)...)
				parallel(t, defs, func(t *testing.T) { rejected(t, dir, "roots.pml", v.want, defs...) })
			}
		})
	}
}
