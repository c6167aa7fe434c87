// Command layoutcheck benchmarks nrtabi's DWARF readers against the peers
// that answer the same questions — pahole (dwarves) and abidw (libabigail)
// — on inputs a sceptic would pick, every peer run in the same run as
// nrtabi, interleaved, and every row kept with its ratio and its verdict,
// whether nrtabi wins it or not.
//
//	go run ./bench/layoutcheck [-runs 5] [-nrtabi BIN] [-profile DIR] [-only GROUPS] [-quick]
//
// The groups, in the order they run (docs/benchmarks.md#layoutcheck-vs-pahole-and-abidw):
//
//	speedup   extract --all -j 2 against -j 1 after waiting for an idle machine
//	lookup    hyperfine: nrtabi show NAME FILE against pahole -C NAME FILE, nrtabi --help against an empty Go program
//	show      nrtabi show and check --require against pahole -C, the same structs of the same file
//	c         extract --all -j 2 against pahole -j2 on C (libc's debug file, the synthetic object)
//	cxx       extract --all -j 2 against abidw on C++ (libstdc++'s debug file, the generated C++ object), pahole beside it
//	profile   with -profile DIR: a CPU profile of extract --all of libstdc++ and its top five functions
//
// Every group prints the load average before and after it.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/bench/benchenv"
)

// options are the bench's flags.
type options struct {
	runs       int
	cache, bin string
	only       string
	profile    string
	quick      bool
	slow       time.Duration
	abidwBound time.Duration
	idle       idleRule
	lookupRuns int
	warmup     int
}

func main() {
	o := options{idle: defaultIdle}
	flag.IntVar(&o.runs, "runs", 5, "interleaved timed runs per tool of a row (median wall and CPU; RSS: largest peak)")
	flag.StringVar(&o.cache, "cache", filepath.Join(os.TempDir(), "nrtabi-bench-layoutcheck"), "where built inputs and the tool build are kept between runs")
	flag.StringVar(&o.bin, "nrtabi", "", "measure this nrtabi binary instead of building ./cmd/nrtabi (to compare a build before a change with one after)")
	flag.StringVar(&o.only, "only", "", "run only these comma-separated groups: speedup, lookup, show, c, cxx, profile")
	flag.StringVar(&o.profile, "profile", "", "write a CPU profile of extract --all -j 2 of libstdc++'s debug file into this directory and print its top five functions")
	flag.DurationVar(&o.slow, "slow", 30*time.Second, "a peer (abidw) whose first run takes longer is timed from that run alone (said in its note); nrtabi always gets -runs")
	flag.DurationVar(&o.abidwBound, "abidw-bound", 60*time.Second, "how long abidw --load-all-types (then plain abidw) may take before the C++ rows stop it and bound the ratio instead")
	flag.DurationVar(&o.idle.bound, "idle-wait", defaultIdle.bound, "how long the speed-up row waits for an idle machine before it runs unjudged")
	flag.Float64Var(&o.idle.below, "idle-load", defaultIdle.below, "the 1-minute load average under which the machine counts as idle")
	flag.DurationVar(&o.idle.sustain, "idle-sustain", defaultIdle.sustain, "how long the load must stay under -idle-load")
	flag.IntVar(&o.lookupRuns, "lookup-runs", 20, "hyperfine --runs of each quick-lookup command")
	flag.IntVar(&o.warmup, "warmup", 3, "hyperfine --warmup of each quick-lookup command")
	flag.BoolVar(&o.quick, "quick", false, "one run of every group on small inputs built here, no idle wait (what go test runs, so the harness cannot rot); peers optional")
	flag.Parse()
	if o.runs < 1 || o.lookupRuns < 1 || o.warmup < 0 {
		fmt.Fprintln(os.Stderr, "bench/layoutcheck: -runs and -lookup-runs must be at least 1, -warmup at least 0")
		os.Exit(2)
	}
	if o.quick {
		o.quickDefaults()
	}
	// The lookups run from lookupDir, so the paths given here are made
	// absolute first.
	for _, p := range []*string{&o.cache, &o.bin} {
		if *p != "" {
			if abs, err := filepath.Abs(*p); err == nil {
				*p = abs
			}
		}
	}
	if err := o.checkOnly(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/layoutcheck:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, o); err != nil {
		fmt.Fprintf(os.Stderr, "bench/layoutcheck: %v\n", err)
		os.Exit(1)
	}
}

// quickDefaults shrinks every count and bound for the quick mode.
func (o *options) quickDefaults() {
	o.runs, o.lookupRuns, o.warmup = 1, 2, 1
	o.idle.bound = 0
	o.abidwBound = time.Minute
}

var groups = []string{"speedup", "lookup", "show", "c", "cxx", "profile"}

// checkOnly refuses an -only list naming a group the bench does not have,
// so a misspelt group is not a run that measured nothing.
func (o options) checkOnly() error {
	if o.only == "" {
		return nil
	}
	for _, s := range strings.Split(o.only, ",") {
		if !slices.Contains(groups, strings.TrimSpace(s)) {
			return fmt.Errorf("-only %q: no group %q (the groups: %s)", o.only, strings.TrimSpace(s), strings.Join(groups, ", "))
		}
	}
	return nil
}

func (o options) selected(g string) bool {
	if g == "profile" && o.profile == "" {
		return false
	}
	if o.only == "" {
		return true
	}
	for _, s := range strings.Split(o.only, ",") {
		if strings.TrimSpace(s) == g {
			return true
		}
	}
	return false
}

// inputs are the files every group reads, by mode.
type inputs struct {
	cLibs, cxxLibs, speedup []library
	lookups                 func(nrtabi, pahole string) []lookup
	profile                 string
	paths                   []library // every input, for the report's heading
}

func prepare(o options) (inputs, error) {
	var in inputs
	if o.quick {
		syn, err := synthetic(o.cache, quickSyn)
		if err != nil {
			return in, err
		}
		cxx, err := cxxObject(o.cache, quickCXX)
		if err != nil {
			return in, err
		}
		dw4, err := dwarf4Object(o.cache)
		if err != nil {
			return in, err
		}
		synL := library{fmt.Sprintf("synthetic C object (%d units × %d structs × %d members)", quickSyn.units, quickSyn.structs, quickSyn.members), syn}
		cxxL := library{fmt.Sprintf("generated C++ object (%d units × %d structs)", quickCXX.units, quickCXX.structs), cxx}
		in.cLibs, in.cxxLibs, in.speedup, in.profile = []library{synL}, []library{cxxL}, []library{synL}, cxx
		in.paths = []library{synL, cxxL, {"DWARF 4 object", dw4}}
		in.lookups = func(nrtabi, pahole string) []lookup {
			return []lookup{showLookup(o, nrtabi, pahole, "DWARF 4 object", dw4, "nec_version_info_t", "nec_version_info")}
		}
		return in, nil
	}
	libcDebug, err := buildIDPath(libcPath)
	if err != nil {
		return in, err
	}
	syn, err := synthetic(o.cache, fullSyn)
	if err != nil {
		return in, err
	}
	var cxx string
	if o.selected("cxx") {
		if cxx, err = cxxObject(o.cache, fullCXX); err != nil {
			return in, err
		}
	}
	libcL := library{"libc debug file (libc6-dbg)", libcDebug}
	cxxStd := library{"libstdc++.so.6.0.30 debug file (libstdc++6-12-dbg)", libstdcxx}
	in.cLibs = []library{libcL, {fmt.Sprintf("synthetic C object (%d units × %d structs × %d members)", fullSyn.units, fullSyn.structs, fullSyn.members), syn}}
	in.cxxLibs = []library{cxxStd, {fmt.Sprintf("generated C++ object (%d units × %d structs through templates, g++ -g)", fullCXX.units, fullCXX.structs), cxx}}
	in.speedup = []library{libcL, cxxStd}
	in.profile = libstdcxx
	in.paths = append(append([]library(nil), in.cLibs...), in.cxxLibs...)
	in.lookups = func(nrtabi, pahole string) []lookup {
		return []lookup{
			showLookup(o, nrtabi, pahole, "libc debug file", libcDebug, "pthread_mutex_t", "pthread_mutex_t"),
			showLookup(o, nrtabi, pahole, "libc debug file", libcDebug, "_IO_FILE", "_IO_FILE"),
			showLookup(o, nrtabi, pahole, "libstdc++ debug file", libstdcxx, "_IO_FILE", "_IO_FILE"),
			showLookup(o, nrtabi, pahole, "libstdc++ debug file", libstdcxx, "std::basic_ostringstream<char>", "basic_ostringstream<char, std::char_traits<char>, std::allocator<char> >"),
		}
	}
	return in, nil
}

func run(ctx context.Context, w io.Writer, o options) error {
	start := time.Now()
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
	bin, how, err := nrtabiBinary(o)
	if err != nil {
		return err
	}
	empty, err := buildEmptyGo(o.cache)
	if err != nil {
		return err
	}
	in, err := prepare(o)
	if err != nil {
		return err
	}
	var peerRows []row
	if o.selected("show") {
		if peerRows, err = smallRows(o, bin); err != nil {
			return err
		}
	}
	pahole, _ := exec.LookPath("pahole")
	fmt.Fprintf(w, "# bench/layoutcheck, %s\n\n- nrtabi: %s\n- machine: %s, %s CPUs; load average at the start %s; inputs prepared in %.0f s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), how, cpuModel(), benchenv.NProc(), benchenv.LoadAvg(), time.Since(start).Seconds())
	for _, p := range in.paths {
		if p.file != "" {
			fmt.Fprintf(w, "- input: %s = %s (%s of .debug_info)\n", p.label, p.file, sectionSize(p.file))
		}
	}
	var goals []goal
	add := func(title, g string, body func() ([]goal, error)) error {
		if !o.selected(g) {
			return nil
		}
		return group(w, title, func() error {
			gs, err := body()
			goals = append(goals, gs...)
			return err
		})
	}
	steps := []struct {
		title, g string
		body     func() ([]goal, error)
	}{
		{"Speed-up: extract --all -j 2 against -j 1", "speedup", func() ([]goal, error) { return speedupRows(ctx, w, o, bin, in.speedup) }},
		{"Quick lookups (hyperfine)", "lookup", func() ([]goal, error) {
			return lookupRows(ctx, w, o, append(in.lookups(bin, pahole), helpLookup(bin, empty)))
		}},
		{"show and check against pahole -C", "show", func() ([]goal, error) {
			var results []result
			for _, r := range peerRows {
				res, err := measureRow(ctx, o.runs, bin, pahole, empty, r)
				if err != nil {
					return nil, err
				}
				results = append(results, res)
			}
			return report(w, o.runs, results), nil
		}},
		{"Whole C libraries: extract --all against pahole", "c", func() ([]goal, error) { return cRows(ctx, w, o, bin, in.cLibs) }},
		{"Whole C++ libraries: extract --all against abidw, pahole beside it", "cxx", func() ([]goal, error) { return cxxRows(ctx, w, o, bin, in.cxxLibs) }},
		{"CPU profile of extract --all", "profile", func() ([]goal, error) { return nil, profileExtract(ctx, w, o.profile, o.cache, in.profile) }},
	}
	for _, s := range steps {
		if err := add(s.title, s.g, s.body); err != nil {
			return err
		}
	}
	summarise(w, goals)
	fmt.Fprintf(w, "\nthe bench took %.0f s; load average at the end %s\n", time.Since(start).Seconds(), benchenv.LoadAvg())
	return nil
}

// nrtabiBinary is the binary measured: -nrtabi's, or ./cmd/nrtabi built
// from the checkout as the README installs it (CGO_ENABLED=0, a static
// binary). how names it and its content hash, so that two reports say
// which builds they measured.
func nrtabiBinary(o options) (bin, how string, err error) {
	bin = o.bin
	if bin == "" {
		bin = filepath.Join(o.cache, "nrtabi")
		build := exec.Command("go", "build", "-o", bin, "./cmd/nrtabi")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("CGO_ENABLED=0 go build ./cmd/nrtabi (run from the repository root): %w\n%s", err, out)
		}
		if err := rewritten(bin); err != nil {
			return "", "", err
		}
		how = "built from the checkout"
		if rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
			how += " at " + strings.TrimSpace(string(rev))
			if st, err := exec.Command("git", "status", "--porcelain").Output(); err == nil && len(st) > 0 {
				how += " (with uncommitted changes)"
			}
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return "", "", err
	} else {
		how = "given by -nrtabi"
	}
	f, err := os.Open(bin)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", "", err
	}
	slog.Info("measuring", "nrtabi", bin)
	return bin, fmt.Sprintf("%s, %s (%.1f MB, sha256 %x)", bin, how, float64(n)/1e6, h.Sum(nil)[:8]), nil
}

// smallRows are the show/check rows (one struct or a spec's structs of
// one file, against pahole -C); the quick mode's are the DWARF 4 object's.
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
