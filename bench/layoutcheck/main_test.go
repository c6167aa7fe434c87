package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// TestQuick runs the whole bench in its quick mode (one run of every group
// on small inputs built here), so the harness cannot rot between the
// manual full runs: every group and every goal must be printed, each goal
// with a verdict.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the quick bench builds nrtabi, C and C++ objects and the profile harness (about a minute)")
	}
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler, which the bench needs to build its inputs: %v", err)
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed (the generated C++ object needs cc1plus): apt-get install g++")
	}
	t.Chdir(filepath.Join("..", ".."))
	o := options{cache: t.TempDir(), quick: true, idle: defaultIdle, profile: filepath.Join(t.TempDir(), "prof")}
	o.quickDefaults()
	var out bytes.Buffer
	if err := run(context.Background(), &out, o); err != nil {
		t.Fatalf("quick bench: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"## Speed-up: extract --all -j 2 against -j 1",
		"not idle: goal not judged",
		"## Quick lookups (hyperfine)",
		"| start-up | wall: nrtabi --help / an empty Go program |",
		"## show and check against pahole -C",
		"| DWARF 4 object (-gdwarf-4, libc headers + the spec header) | nec_version_info_t |",
		"nrtabi_absent_t (absent: full scan)",
		"## Whole C libraries: extract --all against pahole",
		"wall: extract --all -j 2 / pahole -j2",
		"peak RSS: extract --all -j 2 / pahole -j2",
		"## Whole C++ libraries: extract --all against abidw, pahole beside it",
		"nrtabi extract --all -j 1",
		"## CPU profile of extract --all",
		"flat%",
		"load average before: ",
		"load average after: ",
		"## Goals",
		"the bench took ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the quick report lacks %q:\n%s", want, text)
		}
	}
	if _, err := exec.LookPath("abidw"); err == nil && !strings.Contains(text, "wall: extract --all -j 2 / abidw --load-all-types") {
		t.Errorf("abidw is installed, but the C++ row does not use --load-all-types on a small object:\n%s", text)
	}
	// Every goal line ends in a verdict; none is blank.
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "| ") && (strings.Contains(l, "| wall: ") || strings.Contains(l, "| peak RSS: ") || strings.Contains(l, "| speed-up: ")) {
			if !strings.Contains(l, "met") && !strings.Contains(l, "MISSED") && !strings.Contains(l, "FAILED") && !strings.Contains(l, "no ratio: ") && !strings.Contains(l, "no goal stated") && !strings.Contains(l, "not judged") {
				t.Errorf("goal line without a verdict: %s", l)
			}
		}
	}
}

// TestVerdicts plants each kind of result on a goal and reads its verdict:
// a bound on the right side of the limit proves it, one on the wrong side
// proves nothing, a machine that was not idle leaves a speed-up unjudged
// (never a pass), and a failure is a failure whatever else holds.
func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		g    goal
		want string
	}{
		{goal{ratio: 0.4, limit: 0.5}, "met"},
		{goal{ratio: 0.6, limit: 0.5}, "**MISSED**"},
		{goal{ratio: 0.04, limit: 0.05, upper: true}, "met (by a bound)"},
		{goal{ratio: 0.2, limit: 0.05, upper: true}, "a bound on the wrong side of the goal: not judged"},
		{goal{ratio: 1.3, limit: 1, lower: true}, "**MISSED**"},
		{goal{ratio: 0.8, limit: 1, lower: true}, "a bound on the wrong side of the goal: not judged"},
		{goal{ratio: 1.9, limit: 1.7, atLeast: true, unjudged: "not idle", detail: "1-minute load 2.10"}, "not idle: goal not judged (1-minute load 2.10)"},
		{goal{ratio: 1.9, limit: 1.7, atLeast: true}, "met"},
		{goal{ratio: 1.2, limit: 1.7, atLeast: true}, "**MISSED**"},
		{goal{limit: 1.7, atLeast: true, unjudged: "not idle", na: "FAILED: exit 3", failed: true}, "**FAILED**: FAILED: exit 3"},
		{goal{limit: 0.5, na: "pahole not installed"}, "no ratio: pahole not installed"},
		{goal{ratio: 3}, "no goal stated"},
	} {
		if got := c.g.verdict(); got != c.want {
			t.Errorf("%+v: verdict %q, want %q", c.g, got, c.want)
		}
	}
	// A peer stopped at its bound makes the wall ratio an upper bound.
	g := wallGoal("lib", "wall", stat{wall: 2 * time.Second}, stat{notWithin: time.Minute, na: "did not finish"}, 0.05, nil)
	if !g.upper || g.ratioText() != "< 0.033x" || g.verdict() != "met (by a bound)" {
		t.Errorf("a peer that did not finish: %+v %s %s", g, g.ratioText(), g.verdict())
	}
	// Peak RSS at the bench's floor is at most the floor.
	r := rssGoal("lib", "rss", stat{maxRSS: 20 << 20, floor: 20 << 20}, stat{maxRSS: 100 << 20, floor: 20 << 20}, 1)
	if !r.upper || r.verdict() != "met (by a bound)" {
		t.Errorf("nrtabi at the floor: %+v %s", r, r.verdict())
	}
	r = rssGoal("lib", "rss", stat{maxRSS: 20 << 20, floor: 20 << 20}, stat{maxRSS: 20 << 20, floor: 20 << 20}, 1)
	if r.kind() != vUnjudged {
		t.Errorf("both at the floor: %+v %s", r, r.verdict())
	}
	var out bytes.Buffer
	summarise(&out, []goal{{input: "a", what: "w", ratio: 0.6, limit: 0.5, bound: "CPU bound"}, {input: "b", what: "s", ratio: 2, limit: 1.7, atLeast: true, unjudged: "not idle"}})
	for _, want := range []string{"2 goals: 0 met, 1 missed, 0 failed, 1 not judged", "- MISSED: a, w: 0.600x (goal <= 0.50x); CPU bound", "- not judged: b, s: 2.000x, not idle: goal not judged"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in:\n%s", want, out.String())
		}
	}
}

// TestWaitIdle: a load that stays under the limit for the sustain is idle;
// one that dips under and back over restarts the sustain; one that never
// falls is not idle when the bound passes.
func TestWaitIdle(t *testing.T) {
	rule := idleRule{below: 0.3, sustain: 40 * time.Millisecond, bound: 300 * time.Millisecond, step: 5 * time.Millisecond, decay: 10 * time.Millisecond}
	seq := func(v ...float64) func() (float64, bool) {
		i := 0
		return func() (float64, bool) {
			x := v[min(i, len(v)-1)]
			i++
			return x, true
		}
	}
	if r := waitIdle(context.Background(), rule, seq(0.1)); !r.idle || r.maxLoad != 0.1 {
		t.Errorf("an idle machine: %+v", r)
	}
	if r := waitIdle(context.Background(), rule, seq(0.1, 0.9, 0.2)); !r.idle || r.maxLoad != 0.2 || r.waited < rule.sustain {
		t.Errorf("a dip over the limit restarts the sustain: %+v", r)
	}
	// The wait stops at its bound, late by at most what the last sleep
	// overshot: on a loaded machine (the bench's own case, and make test's
	// beside other builds) a 5 ms sleep can take tens of milliseconds, so
	// the check allows a second past the bound, not a second bound.
	if r := waitIdle(context.Background(), rule, seq(1.5)); r.idle || r.last != 1.5 || r.waited > rule.bound+time.Second {
		t.Errorf("a loaded machine: %+v", r)
	}
	// 3 minutes to fall from 5.0 under 0.3 (60 s * ln(5/0.3) = 169 s) and
	// stay there a minute: impossible, said at once.
	long := defaultIdle
	if r := waitIdle(context.Background(), long, seq(5)); r.idle || !r.hopeless || r.waited > time.Second {
		t.Errorf("a load that cannot fall in time: %+v", r)
	}
	if r := waitIdle(context.Background(), rule, func() (float64, bool) { return 0, false }); r.idle {
		t.Errorf("an unreadable load average counts as idle: %+v", r)
	}
	if r := waitIdle(context.Background(), idleRule{below: 0.3, sustain: time.Minute, step: time.Second}, seq(0)); r.idle {
		t.Errorf("a bound of 0 cannot see a minute of idleness: %+v", r)
	}
}

// ballast is memory the bench holds, then lets go of.
var ballast []byte

// TestRunProcFloor: a child's peak RSS from wait4 carries the bench's own
// high-water mark (os/exec starts it sharing the bench's memory until
// exec). The bench lowers its mark to its present size before each start,
// so a ballast it has let go of is not charged to the child; one it still
// holds is, and the reading is marked as the floor, never as the child's.
func TestRunProcFloor(t *testing.T) {
	ballast = make([]byte, 96<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	s, err := runProc(context.Background(), runSpec{bin: "true"})
	if err != nil {
		t.Fatal(err)
	}
	st := stat{maxRSS: s.maxRSS, floor: s.floor}
	if s.floor < 96<<20 || !st.atFloor() || !strings.Contains(rssText(st), "the bench's floor") {
		t.Errorf("true while the bench holds 96 MiB: maxRSS %d, floor %d, %s", s.maxRSS, s.floor, rssText(st))
	}
	held := s.floor
	ballast = nil
	s, err = runProc(context.Background(), runSpec{bin: "true"})
	if err != nil {
		t.Fatal(err)
	}
	// Relative to the floor while held: the test binary's own size varies
	// (the race detector's shadow memory alone is over 100 MiB).
	if s.floor > held-64<<20 || s.maxRSS > held-64<<20 {
		t.Errorf("true after the bench let its 96 MiB go: maxRSS %d, floor %d, floor while held %d (the mark was not lowered)", s.maxRSS, s.floor, held)
	}
	s, err = runProc(context.Background(), runSpec{bin: "sh", args: []string{"-c", "sleep 5"}, timeout: 50 * time.Millisecond})
	if err != nil || !s.timedOut || s.wall > 4*time.Second {
		t.Errorf("a run past its timeout: %+v, %v", s, err)
	}
}

// TestMeasureToolsKeepsFailure runs real processes: a tool that fails a
// judged run is kept with its message and not timed, a peer slower than
// -slow is timed from its first run alone, and the others get every run.
func TestMeasureToolsKeepsFailure(t *testing.T) {
	cache := t.TempDir()
	input := filepath.Join(cache, "input")
	if err := os.WriteFile(input, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(cache, "count")
	done := func(s sample, out string) (int, string, error) {
		b, err := os.ReadFile(out)
		if s.code != 0 || err != nil || !bytes.HasPrefix(b, []byte("done")) {
			return 0, "", os.ErrInvalid
		}
		return 1, "judged", nil
	}
	lines := func(s sample, out string) (int, string, error) {
		b, err := os.ReadFile(out)
		return bytes.Count(b, []byte("\n")), "", err
	}
	tools := []xTool{
		{name: "good", bin: "sh", args: []string{"-c", "echo done"}, cores: 1, judge: done},
		{name: "bad", bin: "sh", args: []string{"-c", "echo broken >&2; exit 3"}, cores: 1, judge: done},
		{name: "slow peer", bin: "sh", args: []string{"-c", "echo x >> " + count + "; sleep 0.2; echo done"}, cores: 1, judge: done, slowOK: true},
		{name: "missing", na: "peer not installed"},
		{name: "bounded peer", notWithin: time.Minute, na: "`abidw` did not finish within 1m0s"},
		{name: "varying peer", bin: "sh", args: []string{"-c", "echo x >> " + count + "-peer; cat " + count + "-peer"}, cores: 1, judge: lines},
		{name: "varying nrtabi", bin: "sh", args: []string{"-c", "echo x >> " + count + "-own; cat " + count + "-own"}, cores: 1, judge: lines, hash: true},
	}
	o := options{runs: 3, cache: cache, slow: 100 * time.Millisecond}
	res, err := measureTools(context.Background(), o, "planted", input, tools)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.stats[0]; s.na != "" || s.runs != 3 || s.note != "judged" || s.count != 1 {
		t.Errorf("the good tool: %+v", s)
	}
	if s := res.stats[1]; !s.failed || !strings.Contains(s.na, "FAILED in run 1") || !strings.Contains(s.na, "broken") {
		t.Errorf("the failing tool is not kept as a failure with its message: %+v", s)
	}
	b, _ := os.ReadFile(count)
	if s := res.stats[2]; s.runs != 1 || bytes.Count(b, []byte("x")) != 1 || !strings.Contains(s.note, "timed from one run") {
		t.Errorf("the slow peer: %+v, ran %d times", s, bytes.Count(b, []byte("x")))
	}
	if s := res.stats[3]; s.na != "peer not installed" {
		t.Errorf("the missing peer: %+v", s)
	}
	if s := res.stats[4]; s.notWithin != time.Minute || s.runs != 0 {
		t.Errorf("a peer stopped at its bound: %+v", s)
	}
	if g := wallGoal("planted", "wall", res.stats[0], res.stats[4], 0.05, nil); !g.upper || g.kind() != vMet {
		t.Errorf("a fast tool against a peer stopped at a minute: %+v", g)
	}
	if s := res.stats[5]; s.na != "" || s.runs != 3 || !strings.Contains(s.note, "the count varied from run to run: 1 to 3") {
		t.Errorf("a peer whose count varies is kept with the range: %+v", s)
	}
	if s := res.stats[6]; !s.failed || !strings.Contains(s.na, "run 2 wrote 2 structs, run 1 wrote 1") {
		t.Errorf("nrtabi's count varying is a failure: %+v", s)
	}
	var out bytes.Buffer
	printTools(&out, res)
	if n := strings.Count(out.String(), "| planted |"); n != 7 {
		t.Errorf("%d of 7 tools printed:\n%s", n, out.String())
	}
}

func TestTopFive(t *testing.T) {
	top := `File: profile
Type: cpu
Showing nodes accounting for 1.2s, 60% of 2s total
Dropped 10 nodes (cum <= 0.01s)
Showing top 5 nodes out of 90
      flat  flat%   sum%        cum   cum%
     0.40s 20.00% 20.00%      0.50s 25.00%  a
     0.30s 15.00% 35.00%      0.30s 15.00%  b
     0.20s 10.00% 45.00%      0.20s 10.00%  c
     0.20s 10.00% 55.00%      0.20s 10.00%  d
     0.10s  5.00% 60.00%      0.10s  5.00%  e
     0.10s  5.00% 65.00%      0.10s  5.00%  f
`
	got := topFive(top, nil)
	if !strings.Contains(got, "  e\n") || strings.Contains(got, "  f\n") || !strings.Contains(got, "flat%") {
		t.Errorf("topFive:\n%s", got)
	}
	if got := topFive(top, func(n string) bool { return n != "b" }); strings.Contains(got, "  b\n") || !strings.Contains(got, "  f\n") {
		t.Errorf("topFive without b:\n%s", got)
	}
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{"show": "show", "/a/b.debug": "/a/b.debug", "std::x<char>": "'std::x<char>'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLookupWithoutHyperfine: without hyperfine the quick-lookup rows are
// still printed, each with the reason and no ratio, and none passes.
func TestLookupWithoutHyperfine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out bytes.Buffer
	goals, err := lookupRows(context.Background(), &out, options{cache: t.TempDir(), lookupRuns: 1}, []lookup{helpLookup("/no/nrtabi", "/no/empty")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "hyperfine is not installed (apt-get install hyperfine)") || !strings.Contains(out.String(), "| start-up | wall: nrtabi --help / an empty Go program | — | <= 2.00x | no ratio: hyperfine not installed") {
		t.Errorf("the rows without hyperfine:\n%s", out.String())
	}
	if len(goals) != 1 || goals[0].kind() != vNoRatio {
		t.Errorf("goals without hyperfine: %+v", goals)
	}
}

// TestAbidwGoalBound: against an abidw stopped at its bound, a fast
// extract is met by the bound, a slow one is left unjudged with the bound
// that would decide it, and a measured abidw gives a plain verdict.
func TestAbidwGoalBound(t *testing.T) {
	stopped := stat{notWithin: time.Minute, na: "did not finish"}
	if g := abidwGoal("lib", "abidw", stat{wall: 2 * time.Second}, stopped); g.kind() != vMet || !g.upper {
		t.Errorf("2 s against a minute's bound: %+v", g)
	}
	g := abidwGoal("lib", "abidw", stat{wall: 40 * time.Second}, stopped)
	if g.kind() != vUnjudged || !strings.Contains(g.verdict(), "abidw was stopped too early to decide: goal not judged (deciding needs -abidw-bound of at least 800 s") {
		t.Errorf("40 s against a minute's bound: %s", g.verdict())
	}
	if g := abidwGoal("lib", "abidw", stat{wall: 40 * time.Second}, stat{wall: 400 * time.Second}); g.kind() != vMissed || g.ratioText() != "0.100x" {
		t.Errorf("40 s against a measured 400 s: %+v", g)
	}
}
