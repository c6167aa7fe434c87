// Command layoutcheck benchmarks nrtabi's DWARF readers against pahole -C
// (Debian's dwarves) on a set of inputs a sceptic would pick, and prints one
// table row per input and struct set: wall time and peak RSS of
// `nrtabi show`, `nrtabi check --require` and `pahole -C` asked for the same
// structs of the same file, each a whole process, interleaved run by run,
// with the ratios. No row is dropped because nrtabi loses it.
//
//	go run ./bench/layoutcheck [-runs 5] [-cache DIR] [-nrtabi BIN]
//
// Inputs (see inputs.go): libc6-dbg's libc debug file reached through the
// build-id tree from /lib/x86_64-linux-gnu/libc.so.6 (compressed DWARF 5),
// libstdc++6-12-dbg's libstdc++ debug file (C++), a 100 MB synthetic object,
// a DWARF 4 object, a struct that exists nowhere (the full scan), and the
// reference libnrt.so.1 and libnccom double built from the 2.31.24 spec,
// and a dwz -m and a -gsplit-dwarf library (where pahole has no answer).
// Requirements are checked first and every missing one is printed.
//
// Its results, dated, are in docs/benchmarks.md#layoutcheck-vs-pahole.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 5, "interleaved runs per tool and row (median wall time; RSS: largest peak)")
	cache := flag.String("cache", filepath.Join(os.TempDir(), "nrtabi-bench-layoutcheck"), "where built inputs and the tool build are kept between runs")
	bin := flag.String("nrtabi", "", "measure this nrtabi binary instead of building ./cmd/nrtabi (to compare two builds)")
	only := flag.String("only", "", "run only the rows whose label contains one of these comma-separated texts")
	slow := flag.Duration("slow", 2*time.Minute, "a throughput tool whose judged run takes longer is timed from that run alone (said in its note); 0: every tool -runs times")
	quick := flag.Bool("quick", false, "one run of every kind of row on small inputs built here (what go test runs, so the harness cannot rot); peers optional")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "bench/layoutcheck: -runs must be at least 1")
		os.Exit(2)
	}
	o := options{runs: *runs, cache: *cache, bin: *bin, only: *only, quick: *quick, slow: *slow}
	if o.quick {
		o.runs = 1
	}
	if err := run(os.Stdout, o); err != nil {
		fmt.Fprintf(os.Stderr, "bench/layoutcheck: %v\n", err)
		os.Exit(1)
	}
}

// options are the bench's flags.
type options struct {
	runs             int
	cache, bin, only string
	quick            bool
	slow             time.Duration
}

func selected(label, only string) bool {
	if only == "" {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		if o != "" && strings.Contains(label, o) {
			return true
		}
	}
	return false
}

func run(w io.Writer, o options) error {
	if missing := requirements(o.quick); len(missing) > 0 {
		fmt.Fprintln(os.Stderr, "bench/layoutcheck: missing requirements:")
		for _, m := range missing {
			fmt.Fprintln(os.Stderr, "  "+m)
		}
		return fmt.Errorf("%d requirement(s) missing; see above", len(missing))
	}
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return err
	}
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(o.cache, "nrtabi")
		// Built as the README installs it: CGO_ENABLED=0, a static binary
		// (with cgo, net would link libc dynamically and pay ld.so at start).
		build := exec.Command("go", "build", "-o", bin, "./cmd/nrtabi")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("CGO_ENABLED=0 go build ./cmd/nrtabi (run from the repository root): %w\n%s", err, out)
		}
	}
	if err := buildMeasureHelper(o.cache); err != nil {
		return err
	}
	pahole, _ := exec.LookPath("pahole")
	empty, err := buildEmptyGo(o.cache)
	if err != nil {
		return err
	}
	floors, err := measureFloors(o.runs, o.cache, bin, empty, o.quick)
	if err != nil {
		return err
	}
	rows, err := smallRows(o, bin)
	if err != nil {
		return err
	}
	var results []result
	for _, r := range rows {
		if !selected(r.label, o.only) {
			continue
		}
		res, err := measureRow(o.runs, bin, pahole, empty, r)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	big, err := bigRows(o, bin)
	if err != nil {
		return err
	}
	var bigResults []bigResult
	for _, r := range big {
		res, err := measureBig(o.runs, o.slow, o.cache, r)
		if err != nil {
			return err
		}
		if r.kind == "whole library" && res.stats[0].na == "" && res.stats[2].na == "" && res.outSum[0] != res.outSum[2] {
			return fmt.Errorf("%s: extract --all wrote different bytes at -j 2 and -j 1 (issue 28 item 3 wants them identical)", r.label)
		}
		bigResults = append(bigResults, res)
	}
	report(w, o.runs, floors, results)
	goals := append([]goal{startupGoal(floors)}, bigGoals(bigResults)...)
	reportBig(w, o.runs, bigResults, goals)
	return nil
}

// smallRows are today's rows (one struct or a spec's structs of one file,
// against pahole -C); the quick mode's are the DWARF 4 object's alone.
func smallRows(o options, bin string) ([]row, error) {
	if !o.quick {
		return buildRows(o.cache, bin)
	}
	dw4, err := dwarf4Object(o.cache)
	if err != nil {
		return nil, err
	}
	frags := filepath.Join(o.cache, "fragments")
	one, _, err := fragment(bin, frags, "quick-one", dw4, "nec_version_info_t")
	if err != nil {
		return nil, err
	}
	absent, err := absentFragment(bin, frags)
	if err != nil {
		return nil, err
	}
	const label = "DWARF 4 object (-gdwarf-4, libc headers + the spec header)"
	return []row{
		{label: label, file: dw4, dwarf: dw4, asked: []string{"nec_version_info_t"}, pahole: []string{"nec_version_info"}, spec: one, role: "none"},
		{label: label, file: dw4, dwarf: dw4, asked: []string{absentName}, pahole: []string{absentName}, spec: absent, role: "none", absent: true},
	}, nil
}

// bigRows are the throughput rows: the directory, then each whole library.
// Only the selected rows' inputs are built (the C++ object takes minutes).
func bigRows(o options, bin string) ([]bigRow, error) {
	syn, cxx := fullSyn, fullCXX
	if o.quick {
		syn, cxx = quickSyn, quickCXX
	}
	synLabel := fmt.Sprintf("synthetic C object (%d units × %d structs × %d members)", syn.units, syn.structs, syn.members)
	cxxLabel := fmt.Sprintf("generated C++ object (%d units × %d structs through templates, g++ -g)", cxx.units, cxx.structs)
	dirLabel := "directory: libc6-dbg and libstdc++6-12-dbg, the reference libnrt.so.1 and libnccom double"
	if o.quick {
		dirLabel = "directory (quick): the tiny, DWARF 4, synthetic and C++ objects"
	}
	var rows []bigRow
	if selected(dirLabel, o.only) {
		var files []string
		if o.quick {
			tiny, err := tinyObject(o.cache)
			if err != nil {
				return nil, err
			}
			dw4, err := dwarf4Object(o.cache)
			if err != nil {
				return nil, err
			}
			synObj, err := synthetic(o.cache, syn)
			if err != nil {
				return nil, err
			}
			cxxObj, err := cxxObject(o.cache, cxx)
			if err != nil {
				return nil, err
			}
			files = []string{tiny, dw4, synObj, cxxObj}
		} else {
			var err error
			if files, err = distributionFiles(); err != nil {
				return nil, err
			}
			lib, stub, err := referenceBuild(o.cache)
			if err != nil {
				return nil, err
			}
			files = append(files, lib, stub)
		}
		dir, err := directoryRow(dirLabel, o.cache, bin, files)
		if err != nil {
			return nil, err
		}
		rows = append(rows, dir)
	}
	type lib struct {
		label string
		file  func() (string, error)
	}
	libs := []lib{
		{synLabel, func() (string, error) { return synthetic(o.cache, syn) }},
		{cxxLabel, func() (string, error) { return cxxObject(o.cache, cxx) }},
	}
	if !o.quick {
		libs = append([]lib{{"libstdc++.so.6.0.30 (libstdc++6-12-dbg)", func() (string, error) { return libstdcxx, nil }}}, libs...)
	}
	for _, l := range libs {
		if !selected(l.label, o.only) {
			continue
		}
		file, err := l.file()
		if err != nil {
			return nil, err
		}
		r, err := wholeLibraryRow(l.label, bin, file)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}
