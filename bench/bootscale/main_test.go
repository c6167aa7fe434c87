package main

import (
	"context"
	"encoding/xml"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/bench/bootsim"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

func TestPerInstance(t *testing.T) {
	for n, want := range map[int]int{1: 1, 4: 2, 8: 3, 9: 3, 10: 4, 64: 8, 65: 9, 256: 16, 100000: 317} {
		if got, err := perInstance("sqrt", n); err != nil || got != want {
			t.Errorf("sqrt of %d: %d, %v; want %d", n, got, err, want)
		}
	}
	if got, _ := perInstance("8", 256); got != 8 {
		t.Errorf("a fixed L of 8: %d", got)
	}
	for _, bad := range []string{"0", "-1", "x", "", "65537", "1e3"} {
		if _, err := perInstance(bad, 8); err == nil {
			t.Errorf("-per-instance %q: no error", bad)
		}
	}
}

func TestParseSizes(t *testing.T) {
	if got, err := parseSizes("8 16\t256"); err != nil || len(got) != 3 || got[2] != 256 {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"", "1", "8 x", "5000", "-8"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("-sizes %q: no error", bad)
		}
	}
}

func TestTimingField(t *testing.T) {
	out := "bootstrap --local 8: all 8 ranks agree\ntiming: n=8 boot_ms=5.970 agree_ms=12.523 done_ms=15.926\n"
	if v, ok := timingField(out, "agree_ms"); !ok || v != 12.523 {
		t.Errorf("agree_ms: %v %v", v, ok)
	}
	for _, bad := range []string{"", "agree_ms=3", "timing: n=8", "timing: agree_ms=NaNx", "timing: agree_ms=-1", "timing: agree_ms=+Inf"} {
		if v, ok := timingField(bad, "agree_ms"); ok {
			t.Errorf("%q: read %v", bad, v)
		}
	}
}

func TestWorldTiming(t *testing.T) {
	ok := func(start, agree string) worldprog.Run {
		return worldprog.Run{Fields: map[string]string{"verdict": "ok", "cluster_id": "c", "unique_id": "u", "nranks": "2", "t_start": start, "t_boot": start, "t_agree": agree}}
	}
	if tm, err := worldTiming([]worldprog.Run{ok("1000000", "5000000"), ok("2000000", "4000000")}); err != nil || tm.agree != 3 || tm.boot != 0 {
		t.Errorf("%v %v, want boot 0 ms, agree 3 ms", tm, err)
	}
	bad := ok("1", "2")
	bad.Fields["unique_id"] = "other"
	failed := ok("1", "2")
	failed.Exit, failed.Stderr = 1, "rank 1: boom\x1b[2J"
	for _, runs := range [][]worldprog.Run{{ok("1", "2"), bad}, {ok("1", "2"), failed}, {ok("1", "2"), ok("x", "2")}, {ok("5", "2")}} {
		if _, err := worldTiming(runs); err == nil {
			t.Errorf("%+v: no error", runs)
		} else if strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("an escape reached the error: %q", err)
		}
	}
}

// The plot is well-formed SVG holding every series, with the measured
// points and both simulated curves; written over a file, not beside it.
func TestPlot(t *testing.T) {
	fit := &bootsim.Fitted{Date: "2026-12-02T20:00:00Z", NProc: "2", FitMaxN: 64,
		Go: bootsim.Params{Accept: 2e-4, Hop: 3e-4, HopPerActive: 1e-5, Wake: 1e-6, Gathers: 2, PerNC: true},
		C:  bootsim.Params{Accept: 2e-4, Hop: 2e-4, HopPerActive: 1e-5, Gathers: 2}}
	for _, r := range []struct {
		v, algo, lang string
		bidi          bool
	}{{"star", "star", "go", false}, {"flat-go", "flat", "go", false}, {"hier-go", "hier", "go", false}, {"hier-c-bidi", "hier", "c", true}} {
		for _, n := range []int{8, 64, 256} {
			fit.Rows = append(fit.Rows, bootsim.MeasuredRow{Variant: r.v, Algo: r.algo, Lang: r.lang, Bidi: r.bidi, N: n, L: 4, BootMs: float64(n), AgreeMs: float64(n)})
		}
	}
	ss, err := plotSeries("sqrt", fit)
	if err != nil {
		t.Fatal(err)
	}
	// 4 measured; star, flat, hier, hier-bidi on this host and past it;
	// mroot-bidi past it only
	if len(ss) != 4+4*2+1 {
		t.Fatalf("%d series, want 4 measured + 9 simulated", len(ss))
	}
	svg := renderPlot("a <title> & more", ss)
	d := xml.NewDecoder(strings.NewReader(svg))
	elems := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elems[se.Name.Local]++
		}
	}
	if elems["svg"] != 1 || elems["polyline"] != 9 || elems["circle"] < 9 {
		t.Errorf("elements %v: want one svg, 9 curves, 9 measured Go points and their legend", elems)
	}
	for _, s := range []string{"hier-go measured", "mroot-bidi sim, past one host", "stroke-dasharray", "5 s at 100k", "users' report, no public source"} {
		if !strings.Contains(svg, s) {
			t.Errorf("the plot has no %q", s)
		}
	}
	for _, s := range ss {
		for _, p := range s.pts {
			if math.IsNaN(p[1]) || p[1] <= 0 {
				t.Errorf("%s: a point %v", s.label, p)
			}
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.svg")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writePlot(path, "sqrt", fit); err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	if got, _ := os.ReadFile(path); !strings.HasPrefix(string(got), "<svg") || len(files) != 1 {
		t.Errorf("after writePlot: %d files, %q...", len(files), string(got)[:min(len(got), 20)])
	}
	if err := writePlot(filepath.Join(dir, "no", "such", "p.svg"), "sqrt", fit); err == nil {
		t.Error("a plot into a missing directory: no error")
	}
}

// The projection refuses a fitted file git does not hold as committed.
func TestProjectNeedsCommittedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fitted.json")
	if err := bootsim.SaveFitted(path, &bootsim.Fitted{NProc: "2", FitMaxN: 64}); err != nil {
		t.Fatal(err)
	}
	err := project(context.Background(), options{fitted: path, perInstance: "sqrt"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not committed") {
		t.Errorf("an uncommitted file: %v", err)
	}
}

// FuzzTimingField: the launcher's output is another process's; whatever it
// prints, the reader neither panics nor returns a value it did not read as
// a finite non-negative number.
func FuzzTimingField(f *testing.F) {
	f.Add("timing: n=8 boot_ms=5.970 agree_ms=12.523 done_ms=15.926\n", "agree_ms")
	f.Add("timing: agree_ms=1e400", "agree_ms")
	f.Add("timing:\x00agree_ms=NaN", "agree_ms")
	f.Fuzz(func(t *testing.T, out, key string) {
		v, ok := timingField(out, key)
		if ok && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
			t.Fatalf("%q %q: accepted %v", out, key, v)
		}
		if !ok && v != 0 && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
			t.Fatalf("%q %q: refused %v", out, key, v)
		}
	})
}

// FuzzSizes: the -sizes and -per-instance flags refuse, never panic, and
// what they accept is within the bench's bounds.
func FuzzSizes(f *testing.F) {
	f.Add("8 16 32", "sqrt", 64)
	f.Add("", "0", 1)
	f.Fuzz(func(t *testing.T, sizes, policy string, n int) {
		if got, err := parseSizes(sizes); err == nil {
			for _, x := range got {
				if x < 2 || x > 4096 {
					t.Fatalf("%q: accepted size %d", sizes, x)
				}
			}
		}
		if n < 1 || n > 1<<20 {
			return
		}
		if l, err := perInstance(policy, n); err == nil && (l < 1 || l > 1<<16) {
			t.Fatalf("%q for %d: L %d", policy, n, l)
		}
	})
}

// TestWithinNoiseFloor: the absolute tolerance applies only below the noise
// floor and only within 1.25 ms; above the floor a 30 % miss stays MISSED.
func TestWithinNoiseFloor(t *testing.T) {
	for _, c := range []struct {
		sec, e float64
		ok     bool
		how    bool
	}{
		{0.100, 0.20, true, false},
		{0.100, -0.30, false, false}, // above the floor: the 25 % alone
		{0.006, 0.30, false, false},  // just above: 1.8 ms off is not forgiven
		{0.004, 0.30, true, true},    // 1.2 ms off a 4 ms row: the tolerance, printed
		{0.004, -0.40, false, false}, // 1.6 ms off: outside it
		{0.0017, -0.70, true, true},
	} {
		ok, how := within(c.sec, c.e)
		if ok != c.ok || (how != "") != c.how {
			t.Errorf("within(%v s, %+.0f%%) = %v %q, want %v (printed %v)", c.sec, c.e*100, ok, how, c.ok, c.how)
		}
		if c.how && !strings.Contains(how, "%") {
			t.Errorf("within(%v, %v): the tolerance grade hides the %% error: %q", c.sec, c.e, how)
		}
	}
}

// TestMergeRows: another run's rows join the file, noted; a variant and
// size in both, or a host of another shape, is refused. Milliseconds.
func TestMergeRows(t *testing.T) {
	dir := t.TempDir()
	row := func(v string, n int) bootsim.MeasuredRow {
		return bootsim.MeasuredRow{Variant: v, Algo: "star", Lang: "go", N: n, BootMs: 1, AgreeMs: 1}
	}
	write := func(name, nproc string, rows ...bootsim.MeasuredRow) string {
		p := filepath.Join(dir, name)
		if err := bootsim.SaveFitted(p, &bootsim.Fitted{Date: name, NProc: nproc, FitMaxN: 64, Rows: rows}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := &bootsim.Fitted{NProc: "2", FitMaxN: 64, Rows: []bootsim.MeasuredRow{row("star", 8)}}
	if err := mergeRows(f, write("big", "2", row("star", 1024))); err != nil || len(f.Rows) != 2 || f.Notes["merged big"] == "" {
		t.Fatalf("merge: %v, %d rows, notes %v", err, len(f.Rows), f.Notes)
	}
	if err := mergeRows(f, write("again", "2", row("star", 8))); err == nil || !strings.Contains(err.Error(), "in both") {
		t.Errorf("a row in both files: %v", err)
	}
	if err := mergeRows(f, write("other", "4", row("star", 2048))); err == nil || !strings.Contains(err.Error(), "CPUs") {
		t.Errorf("another host's shape: %v", err)
	}
}

// TestGrade: -grade takes only committed costs (like -project), and grades
// every row of the other file as a validation row under them. A planted
// row far off the costs is named MISSED. Milliseconds (git in a temp dir).
func TestGrade(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fitted.json")
	costs := bootsim.Params{Hop: 1e-4, Gathers: 2, Cores: 2}
	if err := bootsim.SaveFitted(path, &bootsim.Fitted{NProc: "2", FitMaxN: 64, Go: costs, C: costs}); err != nil {
		t.Fatal(err)
	}
	rows := filepath.Join(dir, "other.json")
	pt := bootsim.Point{Algo: bootsim.Flat, N: 128}
	r, err := pt.Sim(costs)
	if err != nil {
		t.Fatal(err)
	}
	good := bootsim.MeasuredRow{Variant: "flat-go", Algo: "flat", Lang: "go", N: 128, BootMs: r.Seconds * 1e3, AgreeMs: 1}
	bad := good
	bad.Variant, bad.BootMs = "flat-c", r.Seconds*3e3
	bad.Lang = "c"
	if err := bootsim.SaveFitted(rows, &bootsim.Fitted{NProc: "2", FitMaxN: 64, Rows: []bootsim.MeasuredRow{good, bad}}); err != nil {
		t.Fatal(err)
	}
	o := options{fitted: path, grade: rows}
	if err := grade(context.Background(), o, io.Discard); err == nil || !strings.Contains(err.Error(), "not committed") {
		t.Fatalf("uncommitted costs: %v", err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v: %s (install git to run this test)", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "fitted.json")
	git("commit", "-qm", "costs")
	t.Chdir(dir) // committed() asks git about the path as given
	var out strings.Builder
	o.fitted = "fitted.json"
	if err := grade(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "2 rows") || !strings.Contains(s, "1 MISSED") || strings.Count(s, "validation") < 2 {
		t.Errorf("grades:\n%s", s)
	}
}

// TestFirstWarning: a failed C host is reported by the first WARN or ERROR
// line of its log, escaped, before its last; a log without one adds nothing.
func TestFirstWarning(t *testing.T) {
	log := "time=1 level=INFO msg=started\nlibnccom 7 NCCL WARN bootstrap cannot listen on 127.0.0.1:5: Address already in use\x1b[2J\ntime=3 level=ERROR msg=\"bootstrap world failed\"\n"
	got := firstWarning(log)
	if !strings.HasPrefix(got, "libnccom 7 NCCL WARN bootstrap cannot listen") || !strings.HasSuffix(got, "; then: ") || strings.Contains(got, "\x1b") {
		t.Errorf("firstWarning = %q, want the WARN line, escaped, then \"; then: \"", got)
	}
	if got := firstWarning("time=1 level=INFO msg=started\n"); got != "" {
		t.Errorf("a log without a warning: %q, want nothing", got)
	}
}

// goals judges every variant at 256 and 1024 against the star, and says
// of a floor where the goal lies against it, never met or MISSED: a
// floor is no implementation (docs/benchmarks.md#the-floor-under-agree).
func TestGoalsFloor(t *testing.T) {
	meds := map[string]map[int]float64{
		"star":    {256: 40, 1024: 200},
		"hier-go": {256: 100, 1024: 400},
		"floor":   {256: 90, 1024: 400},
	}
	var b strings.Builder
	goals(&b, "agree", meds, map[string]bool{"floor": true})
	out := b.String()
	for _, want := range []string{
		"agree at N=256: hier-go          2.50x star (goal <= 2.0x: MISSED)",
		"agree at N=1024: hier-go          2.00x star (goal <= 2.5x: met)",
		"agree at N=256: floor            2.25x star (goal <= 2.0x: a floor: the seed's messages and nothing else; the goal is below it)",
		"agree at N=1024: floor            2.00x star (goal <= 2.5x: a floor: the seed's messages and nothing else; the goal is above it)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("goals printed\n%s\nwithout %q", out, want)
		}
	}
	if strings.Contains(out, "floor            2.25x star (goal <= 2.0x: MISSED") {
		t.Errorf("a floor judged as an implementation:\n%s", out)
	}
}
