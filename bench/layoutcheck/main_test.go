package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// TestQuick runs the whole bench in its quick mode (one run of every kind
// of row on small inputs built here), so the harness cannot rot between
// the manual full runs: every row and every goal must be printed, with a
// ratio or the reason it has none.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the quick bench builds nrtabi, C and C++ objects (about 20 s)")
	}
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler, which the bench needs to build its inputs: %v", err)
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed (the generated C++ object needs cc1plus): apt-get install g++")
	}
	t.Chdir(filepath.Join("..", ".."))
	var out bytes.Buffer
	if err := run(&out, options{runs: 1, cache: t.TempDir(), quick: true}); err != nil {
		t.Fatalf("quick bench: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"| DWARF 4 object (-gdwarf-4, libc headers + the spec header) | nec_version_info_t |",
		"| DWARF 4 object (-gdwarf-4, libc headers + the spec header) | nrtabi_absent_t (absent: full scan) |",
		"| " + floorEmpty + " |",
		"| " + floorHelp + " |",
		"| start-up guard | wall: nrtabi --help / an empty Go program |",
		"nrtabi check --spec 2.31.24 -j 2 DIR",
		"xargs -P 2 pahole -C SPEC-STRUCTS FILE",
		"xargs -P 2 abidw FILE",
		"wall: check -j 2 DIR / pahole per file (xargs -P 2)",
		"goals met: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the quick report lacks %q:\n%s", want, text)
		}
	}
	for _, lib := range []string{"synthetic C object (2 units", "generated C++ object (1 units"} {
		for _, tool := range []string{"nrtabi extract --all -j 2", "nrtabi extract --all -j 1", "pahole -j2 FILE >/dev/null", "abidw FILE >/dev/null"} {
			if !strings.Contains(text, tool+" |") || !strings.Contains(text, lib) {
				t.Errorf("the quick report lacks %s on %s:\n%s", tool, lib, text)
			}
		}
		for _, g := range []string{"wall: extract --all -j 2 / pahole -j2", "wall: extract --all -j 2 / abidw", "peak RSS: extract --all -j 2 / pahole -j2", "speed-up: extract -j 1 wall / -j 2 wall"} {
			if !strings.Contains(text, g) {
				t.Errorf("the quick report lacks the goal %q:\n%s", g, text)
			}
		}
	}
	// Every goal line ends in a verdict: met, MISSED, FAILED, or why it has
	// no ratio; none is blank.
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "| wall: ") || strings.Contains(l, "| peak RSS: ") || strings.Contains(l, "| speed-up: ") {
			if !strings.Contains(l, "met |") && !strings.Contains(l, "MISSED") && !strings.Contains(l, "FAILED") && !strings.Contains(l, "no ratio: ") && !strings.Contains(l, "no goal stated") {
				t.Errorf("goal line without a verdict: %s", l)
			}
		}
	}
}

func msT(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// wholeLibrary is a whole-library result with the given stats (extract
// -j 2, pahole, extract -j 1, abidw).
func wholeLibrary(ex2, ph, ex1, ab stat) bigResult {
	r := bigRow{label: "lib", kind: "whole library", debugInfo: 100 << 20, files: 1, tools: []bigTool{
		{name: "nrtabi extract --all -j 2", cores: 2}, {name: "pahole -j2 FILE >/dev/null", cores: 2},
		{name: "nrtabi extract --all -j 1", cores: 1}, {name: "abidw FILE >/dev/null", cores: 1}}}
	return bigResult{row: r, stats: []stat{ex2, ph, ex1, ab}, notes: make([]string, 4)}
}

// TestGoalsMarkMisses plants a loss on every goal and sees each marked and
// listed with what bounds it, then a win on every goal and sees none listed.
func TestGoalsMarkMisses(t *testing.T) {
	lose := wholeLibrary(
		stat{wall: msT(100), cpu: msT(110), maxRSS: 300 << 20},
		stat{wall: msT(150), cpu: msT(280), maxRSS: 200 << 20},
		stat{wall: msT(105), cpu: msT(100), maxRSS: 290 << 20},
		stat{wall: msT(500), cpu: msT(500), maxRSS: 900 << 20})
	var out bytes.Buffer
	reportBig(&out, 5, []bigResult{lose}, bigGoals([]bigResult{lose}))
	text := out.String()
	for _, want := range []string{
		"| lib | wall: extract --all -j 2 / pahole -j2 | 0.67x | <= 0.50x | **MISSED** |",
		"| lib | wall: extract --all -j 2 / abidw | 0.20x | <= 0.10x | **MISSED** |",
		"| lib | peak RSS: extract --all -j 2 / pahole -j2 | 1.50x | <= 1.00x | **MISSED** |",
		"| lib | speed-up: extract -j 1 wall / -j 2 wall | 1.05x | >= 1.70x | **MISSED** |",
		"goals met: 0 of 4; missed:",
		"extract -j 2 used 55% of its 2 cores",
		"a serial fraction of 90% by Amdahl",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
	win := wholeLibrary(
		stat{wall: msT(10), cpu: msT(19), maxRSS: 100 << 20},
		stat{wall: msT(150), cpu: msT(280), maxRSS: 200 << 20},
		stat{wall: msT(19), cpu: msT(18), maxRSS: 90 << 20},
		stat{wall: msT(500), cpu: msT(500), maxRSS: 900 << 20})
	out.Reset()
	reportBig(&out, 5, []bigResult{win}, bigGoals([]bigResult{win}))
	if text := out.String(); !strings.Contains(text, "goals met: 4 of 4\n") || strings.Contains(text, "MISSED") {
		t.Errorf("a win on every goal is reported as:\n%s", text)
	}
}

// TestFailedAndMissingKept: a peer that is not installed stays in the table
// with the reason in place of its numbers, and an nrtabi run that fails is
// a miss, never a dropped row.
func TestFailedAndMissingKept(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	bin, na := peer("abidw", "abigail-tools")
	if bin != "" || na != "abidw not installed (apt-get install abigail-tools)" {
		t.Fatalf("peer with abidw off PATH: %q, %q", bin, na)
	}
	res := wholeLibrary(
		stat{na: "FAILED: exit 1: nrtabi extract: internal error", failed: true},
		stat{na: "pahole not installed (apt-get install dwarves)"},
		stat{wall: msT(10), cpu: msT(10), maxRSS: 10 << 20},
		stat{na: na})
	var out bytes.Buffer
	reportBig(&out, 5, []bigResult{res}, bigGoals([]bigResult{res}))
	text := out.String()
	for _, want := range []string{
		"| lib | 100.0 MiB | abidw FILE >/dev/null | 1 | — | — | — | — | abidw not installed (apt-get install abigail-tools) |",
		"| lib | 100.0 MiB | pahole -j2 FILE >/dev/null | 2 | — | — | — | — | pahole not installed (apt-get install dwarves) |",
		"| lib | wall: extract --all -j 2 / pahole -j2 | — | <= 0.50x | **FAILED**: FAILED: exit 1",
		"| lib | speed-up: extract -j 1 wall / -j 2 wall | — | >= 1.70x | **FAILED**",
		"goals met: 0 of 4; missed:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
}

// TestMeasureBigKeepsFailure runs real processes: a tool whose judged
// warm-up fails is kept with its message and not timed, and the others are.
func TestMeasureBigKeepsFailure(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler for csrc/measure.c: %v", err)
	}
	cache := t.TempDir()
	if err := buildMeasureHelper(cache); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	exitOK := func(s sample, out string) (string, error) {
		if s.code != 0 {
			return "", os.ErrInvalid
		}
		b, err := os.ReadFile(out)
		if err != nil || !bytes.Equal(b, []byte("done\n")) {
			return "", os.ErrInvalid
		}
		return "judged", nil
	}
	r := bigRow{label: "planted", kind: "whole library", tools: []bigTool{
		{name: "good", bin: sh, args: []string{"-c", "echo done"}, cores: 1, ok: exitOK},
		{name: "bad", bin: sh, args: []string{"-c", "echo broken >&2; exit 3"}, cores: 1, ok: exitOK},
	}}
	res, err := measureBig(3, 0, cache, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.stats[0].na != "" || res.stats[0].wall == 0 || res.notes[0] != "judged" {
		t.Errorf("the good tool: %+v, note %q", res.stats[0], res.notes[0])
	}
	if !res.stats[1].failed || !strings.HasPrefix(res.stats[1].na, "FAILED: ") || !strings.Contains(res.stats[1].na, "broken") {
		t.Errorf("the failing tool is not kept as a failure with its message: %+v", res.stats[1])
	}
}

// TestMeasureBigSlowToolOnce: a tool whose judged run exceeds -slow is
// timed from that run alone, says so in its note, and is not run again;
// a fast tool beside it still runs every time.
func TestMeasureBigSlowToolOnce(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler for csrc/measure.c: %v", err)
	}
	cache := t.TempDir()
	if err := buildMeasureHelper(cache); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(cache, "count")
	ok := func(s sample, out string) (string, error) { return "", nil }
	r := bigRow{label: "slow", kind: "whole library", tools: []bigTool{
		{name: "fast", bin: "sh", args: []string{"-c", "true"}, cores: 1, ok: ok},
		{name: "slow", bin: "sh", args: []string{"-c", "echo x >> " + count + "; sleep 0.3"}, cores: 1, ok: ok},
	}}
	res, err := measureBig(4, 100*time.Millisecond, cache, r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(count)
	if n := bytes.Count(b, []byte("x")); n != 1 {
		t.Errorf("the slow tool ran %d times, want its judged run alone", n)
	}
	if !strings.Contains(res.notes[1], "one run (the judged one") || res.stats[1].wall < 300*time.Millisecond {
		t.Errorf("the slow tool: %+v, note %q", res.stats[1], res.notes[1])
	}
	if res.stats[0].wall == 0 || strings.Contains(res.notes[0], "one run") {
		t.Errorf("the fast tool: %+v, note %q", res.stats[0], res.notes[0])
	}
}
