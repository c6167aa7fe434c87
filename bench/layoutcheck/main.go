// Command layoutcheck benchmarks `nrtabi check` against pahole -C (Debian's
// dwarves) on the same structs of the same file, in the same run, and prints
// wall time, peak RSS and the ratios.
//
//	go run ./bench/layoutcheck [-runs 5] [-cache DIR]
//
// Inputs: Debian's libstdc++6-12-dbg debug libstdc++.so.6.0.30 (a spec of
// its own types, extracted first), and a synthetic shared object with
// >= 50 000 structs and >= 100 MB of .debug_info generated here by gcc -g,
// whose last compilation unit holds the 2.31.24 struct set (so both tools
// must read every unit before they find it).
package main

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/spec"
)

const libstdcxx = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"

// Synthetic object shape: 102 units of 500 structs of 150 members
// (51 000 structs, about 102 MiB of .debug_info).
const (
	synUnits   = 102
	synStructs = 500
	synMembers = 150
)

type measurement struct {
	wall   time.Duration
	maxRSS int64 // bytes
	out    []byte
}

func measure(name string, args ...string) (measurement, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		return measurement{}, fmt.Errorf("%s: %v", name, err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	m := measurement{wall: wall, out: out.Bytes()}
	if ru != nil {
		m.maxRSS = ru.Maxrss * 1024
	}
	// nrtabi check exits 4/8 on findings; the bench wants clean inputs.
	if err != nil {
		return m, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return m, nil
}

// series runs a command n times: median wall time, largest peak RSS.
func series(n int, name string, args ...string) (measurement, error) {
	var walls []time.Duration
	var last measurement
	var rss int64
	for range n {
		m, err := measure(name, args...)
		if err != nil {
			return m, err
		}
		walls = append(walls, m.wall)
		rss = max(rss, m.maxRSS)
		last = m
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	return measurement{wall: walls[len(walls)/2], maxRSS: rss, out: last.out}, nil
}

func debugInfoSize(path string) (int64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := f.Section(".debug_info")
	if s == nil {
		return 0, fmt.Errorf("%s has no .debug_info", path)
	}
	return int64(s.Size), nil
}

type row struct {
	input      string
	info       int64
	ours, peer measurement
	structs    int
}

func main() {
	runs := flag.Int("runs", 5, "runs per tool and input (median wall time, largest RSS)")
	cache := flag.String("cache", filepath.Join(os.TempDir(), "nrtabi-bench-layoutcheck"), "where the synthetic object and the tool build are kept between runs")
	flag.Parse()
	if err := run(*runs, *cache); err != nil {
		fmt.Fprintf(os.Stderr, "bench/layoutcheck: %v\n", err)
		os.Exit(1)
	}
}

func run(runs int, cache string) error {
	pahole, err := exec.LookPath("pahole")
	if err != nil {
		return fmt.Errorf("pahole not found: apt-get install dwarves")
	}
	if _, err := os.Stat(libstdcxx); err != nil {
		return fmt.Errorf("%s absent: apt-get install libstdc++6-12-dbg", libstdcxx)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	nrtabi := filepath.Join(cache, "nrtabi")
	if out, err := exec.Command("go", "build", "-o", nrtabi, "./cmd/nrtabi").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/nrtabi (run from the repository root): %v\n%s", err, out)
	}
	var rows []row
	// The process floor: nrtabi loading its embedded spec and doing nothing
	// else, so the RSS a check adds on top of it can be read off.
	base, err := series(runs, nrtabi, "spec", "validate")
	if err != nil {
		return err
	}

	// libstdc++: a fragment of its own types, extracted once (not timed).
	frag := filepath.Join(cache, "libstdcxx-spec")
	if err := os.MkdirAll(frag, 0o755); err != nil {
		return err
	}
	cxxTypes := []string{"_IO_FILE", "std::basic_ostringstream<char>"}
	args := []string{"extract", "-o", filepath.Join(frag, "structs.toml")}
	for _, t := range cxxTypes {
		args = append(args, "--struct", t)
	}
	if out, err := exec.Command(nrtabi, append(args, libstdcxx)...).CombinedOutput(); err != nil {
		return fmt.Errorf("nrtabi extract: %v\n%s", err, out)
	}
	// pahole -C splits on commas, so the C++ name goes through a file list.
	list := filepath.Join(cache, "libstdcxx-classes.txt")
	if err := os.WriteFile(list, []byte("_IO_FILE\nbasic_ostringstream<char, std::char_traits<char>, std::allocator<char> >\n"), 0o644); err != nil {
		return err
	}
	r, err := compare(runs, nrtabi, pahole, "libstdc++.so.6.0.30 (Debian libstdc++6-12-dbg)", libstdcxx,
		[]string{"check", "--spec", frag, "--role", "none", libstdcxx}, []string{"-C", "file://" + list, libstdcxx}, 2)
	if err != nil {
		return err
	}
	rows = append(rows, r)

	// The synthetic object.
	sp, err := spec.Load(spec.Default)
	if err != nil {
		return err
	}
	syn, err := synthetic(cache)
	if err != nil {
		return err
	}
	var tags []string
	for _, st := range sp.Structs {
		tags = append(tags, st.CTag())
	}
	r, err = compare(runs, nrtabi, pahole, fmt.Sprintf("synthetic (%d structs + the %d of %s)", synUnits*synStructs, len(sp.Structs), spec.Default), syn,
		[]string{"check", "--release", spec.Default, "--role", "none", syn}, []string{"-C", strings.Join(tags, ","), syn}, len(sp.Structs))
	if err != nil {
		return err
	}
	rows = append(rows, r)
	report(rows, runs, base)
	return nil
}

func compare(runs int, nrtabi, pahole, label, file string, ours, peer []string, want int) (row, error) {
	info, err := debugInfoSize(file)
	if err != nil {
		return row{}, err
	}
	slog.Info("measuring", "input", label, "runs", runs)
	o, err := series(runs, nrtabi, ours...)
	if err != nil {
		return row{}, err
	}
	p, err := series(runs, pahole, peer...)
	if err != nil {
		return row{}, err
	}
	// Both tools must have found every struct, or the timing means nothing.
	if got := bytes.Count(o.out, []byte("\n    OK ")); got != want {
		return row{}, fmt.Errorf("%s: nrtabi check found %d structs clean, want %d:\n%s", label, got, want, o.out)
	}
	if got := bytes.Count(p.out, []byte("/* size: ")); got < want {
		return row{}, fmt.Errorf("%s: pahole printed %d structs, want %d", label, got, want)
	}
	return row{input: label, info: info, ours: o, peer: p, structs: want}, nil
}

func report(rows []row, runs int, base measurement) {
	fmt.Printf("\nnrtabi check vs pahole -C (dwarves), same structs, same file; median of %d runs, largest peak RSS\n\n", runs)
	fmt.Printf("| input | .debug_info | structs | nrtabi wall | pahole wall | wall ratio | nrtabi RSS | pahole RSS | RSS ratio | nrtabi RSS / .debug_info | (RSS - floor) / .debug_info |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %s | %.1f MiB | %d | %s | %s | %.2fx | %.1f MiB | %.1f MiB | %.2fx | %.2fx | %.2fx |\n",
			r.input, mb(r.info), r.structs, r.ours.wall.Round(time.Millisecond), r.peer.wall.Round(time.Millisecond),
			float64(r.ours.wall)/float64(r.peer.wall), mb(r.ours.maxRSS), mb(r.peer.maxRSS),
			float64(r.ours.maxRSS)/float64(r.peer.maxRSS), float64(r.ours.maxRSS)/float64(r.info),
			float64(r.ours.maxRSS-base.maxRSS)/float64(r.info))
	}
	fmt.Printf("\nfloor: nrtabi spec validate (Go runtime + embedded spec) peaks at %.1f MiB\n", mb(base.maxRSS))
	fmt.Printf("goals: wall ratio <= 1.00x; nrtabi RSS <= 2x .debug_info\n")
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// synthetic builds (once, cached) a shared object from synUnits generated C
// units plus one unit holding every struct of the generated header.
func synthetic(cache string) (string, error) {
	header, err := filepath.Abs(filepath.Join("generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		return "", err
	}
	// The cached object is only as current as the header it holds.
	text, err := os.ReadFile(header)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(text)
	dir := filepath.Join(cache, fmt.Sprintf("synthetic-%dx%dx%d-%x", synUnits, synStructs, synMembers, sum[:6]))
	out := filepath.Join(dir, "libsynthetic.so")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	slog.Info("generating the synthetic object (once per header)", "units", synUnits, "structs", synUnits*synStructs, "dir", dir)
	types := []string{"int", "long", "char", "short", "unsigned int", "void *", "double", "unsigned char"}
	var srcs []string
	for u := range synUnits {
		var b strings.Builder
		for s := range synStructs {
			fmt.Fprintf(&b, "struct syn%d_s%d {\n", u, s)
			for m := range synMembers {
				fmt.Fprintf(&b, "\t%s m%d;\n", types[(s+m)%len(types)], m)
			}
			b.WriteString("};\n")
		}
		name := fmt.Sprintf("syn%03d.c", u)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return "", err
		}
		srcs = append(srcs, name)
	}
	last := "zz_spec_types.c"
	if err := os.WriteFile(filepath.Join(dir, last), []byte("#define _GNU_SOURCE\n#include \""+header+"\"\n"), 0o644); err != nil {
		return "", err
	}
	srcs = append(srcs, last)
	// Compile on every core, then link in unit order (the spec unit last).
	var wg sync.WaitGroup
	errs := make(chan error, len(srcs))
	sem := make(chan struct{}, runtime.NumCPU())
	var objs []string
	for _, src := range srcs {
		obj := strings.TrimSuffix(src, ".c") + ".o"
		objs = append(objs, obj)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.Command("gcc", "-c", "-fPIC", "-g", "-fno-eliminate-unused-debug-types", "-o", obj, src)
			cmd.Dir = dir
			if o, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("gcc %s: %v\n%s", src, err, o)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	cmd := exec.Command("gcc", append([]string{"-shared", "-o", tmp}, objs...)...)
	cmd.Dir = dir
	if o, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc -shared: %v\n%s", err, o)
	}
	for _, o := range append(objs, srcs...) {
		os.Remove(filepath.Join(dir, o))
	}
	return out, os.Rename(tmp, out)
}
