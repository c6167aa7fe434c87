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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	runs := flag.Int("runs", 5, "interleaved runs per tool and row (median wall time; RSS: largest peak)")
	cache := flag.String("cache", filepath.Join(os.TempDir(), "nrtabi-bench-layoutcheck"), "where built inputs and the tool build are kept between runs")
	bin := flag.String("nrtabi", "", "measure this nrtabi binary instead of building ./cmd/nrtabi (to compare two builds)")
	only := flag.String("only", "", "run only the rows whose label contains one of these comma-separated texts")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "bench/layoutcheck: -runs must be at least 1")
		os.Exit(2)
	}
	if err := run(*runs, *cache, *bin, *only); err != nil {
		fmt.Fprintf(os.Stderr, "bench/layoutcheck: %v\n", err)
		os.Exit(1)
	}
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

func run(runs int, cache, bin, only string) error {
	if missing := requirements(); len(missing) > 0 {
		fmt.Fprintln(os.Stderr, "bench/layoutcheck: missing requirements:")
		for _, m := range missing {
			fmt.Fprintln(os.Stderr, "  "+m)
		}
		return fmt.Errorf("%d requirement(s) missing; see above", len(missing))
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	if bin == "" {
		bin = filepath.Join(cache, "nrtabi")
		// Built as the README installs it: CGO_ENABLED=0, a static binary
		// (with cgo, net would link libc dynamically and pay ld.so at start).
		build := exec.Command("go", "build", "-o", bin, "./cmd/nrtabi")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("CGO_ENABLED=0 go build ./cmd/nrtabi (run from the repository root): %w\n%s", err, out)
		}
	}
	if err := buildMeasureHelper(cache); err != nil {
		return err
	}
	pahole, _ := exec.LookPath("pahole")
	empty, err := buildEmptyGo(cache)
	if err != nil {
		return err
	}
	floors, err := measureFloors(runs, cache, bin, empty)
	if err != nil {
		return err
	}
	rows, err := buildRows(cache, bin)
	if err != nil {
		return err
	}
	var results []result
	for _, r := range rows {
		if !selected(r.label, only) {
			continue
		}
		res, err := measureRow(runs, bin, pahole, empty, r)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	report(os.Stdout, runs, floors, results)
	return nil
}
