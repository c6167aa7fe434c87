package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// sample is one whole-process run: wall time from fork to reap, and the
// peak RSS the kernel reports for it in wait4's rusage.
type sample struct {
	wall   time.Duration
	maxRSS int64         // bytes
	cpu    time.Duration // user + system, the child's and its waited-for descendants'
	code   int
	out    []byte
	errOut []byte
}

// measureHelper is the compiled csrc/measure.c: every tool runs under it,
// because a process that Go's os/exec starts (by vfork) inherits the
// bench's own peak RSS in its rusage.
var measureHelper string

//go:embed csrc/measure.c
var measureSource []byte

// buildMeasureHelper compiles csrc/measure.c into cache.
func buildMeasureHelper(cache string) error {
	src := filepath.Join(cache, "measure.c")
	if err := os.WriteFile(src, measureSource, 0o644); err != nil {
		return err
	}
	bin := filepath.Join(cache, "measure")
	if err := cc.Run("", "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin, src); err != nil {
		return fmt.Errorf("csrc/measure.c: %w", err)
	}
	measureHelper = bin
	return nil
}

func runOnce(bin string, args []string) (sample, error) { return runTo(bin, args, false) }

// runTo runs bin under the measure helper; with devnull its standard output
// goes straight to /dev/null, as `pahole FILE >/dev/null` in a shell: a
// whole library's output is megabytes, and copying them into the bench
// would be charged to whichever tool writes most.
func runTo(bin string, args []string, devnull bool) (sample, error) {
	if !devnull {
		return runFile(bin, args, nil)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return sample{}, err
	}
	defer null.Close()
	return runFile(bin, args, null)
}

// runFile runs bin under the measure helper with its standard output to
// stdout, or into the sample when stdout is nil.
func runFile(bin string, args []string, stdout *os.File) (sample, error) {
	cmd := exec.Command(measureHelper, append([]string{bin}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdout != nil {
		cmd.Stdout = stdout
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return sample{}, err
	}
	defer pr.Close()
	cmd.ExtraFiles = []*os.File{pw}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w", bin, err)
	}
	rep, _ := io.ReadAll(pr)
	_ = cmd.Wait()
	if cmd.ProcessState == nil {
		return sample{}, fmt.Errorf("%s: did not run", bin)
	}
	var ns, kb, cpu int64
	if _, err := fmt.Sscan(string(rep), &ns, &kb, &cpu); err != nil {
		return sample{}, fmt.Errorf("%s %s: the measure helper reported %q (%w); stderr: %s", bin, strings.Join(args, " "), rep, err, clip(errb.Bytes()))
	}
	return sample{wall: time.Duration(ns), maxRSS: kb * 1024, cpu: time.Duration(cpu), code: cmd.ProcessState.ExitCode(), out: out.Bytes(), errOut: errb.Bytes()}, nil
}

// tool is one command of a row and how to tell that it did the job (a run
// that did not find the structs it was asked for times nothing).
type tool struct {
	name string
	bin  string
	args []string
	ok   func(s sample) error
}

// stat is a tool's result over the runs: median wall, largest peak RSS.
type stat struct {
	wall   time.Duration
	cpu    time.Duration // median user + system time
	maxRSS int64
	na     string // why the tool has no number on this row
	failed bool   // it ran and failed its judged run (na says how): a miss
}

type result struct {
	row   row
	stats []stat // show, check, pahole, the empty Go program
}

// measureRow runs the row's tools and an empty Go program interleaved: run
// i starts with tool i mod 4, so no tool always runs first on a warm or a
// cold cache. One untimed run of each warms the page cache first.
func measureRow(runs int, nrtabi, pahole, empty string, r row) (result, error) {
	slog.Info("measuring", "row", r.label, "runs", runs)
	tools := append(r.tools(nrtabi, pahole), tool{name: "empty Go program", bin: empty, ok: func(s sample) error {
		if s.code != 0 {
			return fmt.Errorf("exit %d", s.code)
		}
		return nil
	}})
	walls := make([][]time.Duration, len(tools))
	rss := make([]int64, len(tools))
	for i := -1; i < runs; i++ {
		for k := range tools {
			t := tools[(max(i, 0)+k)%len(tools)]
			idx := (max(i, 0) + k) % len(tools)
			if t.bin == "" {
				continue
			}
			s, err := runOnce(t.bin, t.args)
			if err != nil {
				return result{}, err
			}
			if err := t.ok(s); err != nil {
				return result{}, fmt.Errorf("%s: %s %s: %w\nstdout:\n%s\nstderr:\n%s", r.label, t.name, strings.Join(t.args, " "), err, clip(s.out), clip(s.errOut))
			}
			if i < 0 {
				continue
			}
			walls[idx] = append(walls[idx], s.wall)
			rss[idx] = max(rss[idx], s.maxRSS)
		}
	}
	res := result{row: r}
	for k, t := range tools {
		if t.bin == "" {
			res.stats = append(res.stats, stat{na: strings.Join(t.args, " ")})
			continue
		}
		res.stats = append(res.stats, stat{wall: median(walls[k]), maxRSS: rss[k]})
	}
	return res, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func clip(b []byte) string {
	const n = 2000
	if len(b) > n {
		return string(b[:n]) + "\n[...]"
	}
	return string(b)
}

// floor is the cost of a process that does (nearly) nothing.
type floor struct {
	what string
	stat stat
}

// The floors the start-up guard compares (startupGoal).
const (
	floorEmpty = "empty Go program (the Go runtime's floor)"
	floorHelp  = "nrtabi --help"
)

// measureFloors times what every command pays before it reads a byte of
// DWARF: an empty Go program (the runtime's own floor), nrtabi's spec
// commands, and nrtabi show on a tiny object.
func measureFloors(runs int, cache, nrtabi, empty string, quick bool) ([]floor, error) {
	tiny, err := tinyObject(cache)
	if err != nil {
		return nil, err
	}
	type proc struct {
		what string
		bin  string
		args []string
	}
	list := []proc{
		{floorEmpty, empty, nil},
		{floorHelp, nrtabi, []string{"--help"}},
		{"nrtabi spec validate (embedded 2.31.24)", nrtabi, []string{"spec", "validate"}},
		{"nrtabi show nec_version_info_t on a 1-struct object", nrtabi, []string{"show", "nec_version_info_t", tiny}},
	}
	if p, na := peer("pahole", "dwarves"); na == "" {
		list = append(list, proc{"pahole -C nec_version_info on the same object", p, []string{"-C", "nec_version_info", tiny}})
	} else if !quick {
		return nil, errors.New(na)
	}
	walls := make([][]time.Duration, len(list))
	rss := make([]int64, len(list))
	for i := -1; i < runs; i++ {
		for k, l := range list {
			s, err := runOnce(l.bin, l.args)
			if err != nil {
				return nil, err
			}
			if s.code&^12 != 0 { // show's exit bits 4 and 8 are findings, not failures
				return nil, fmt.Errorf("%s: exit %d\n%s", l.what, s.code, clip(s.errOut))
			}
			if i >= 0 {
				walls[k] = append(walls[k], s.wall)
				rss[k] = max(rss[k], s.maxRSS)
			}
		}
	}
	var out []floor
	for k, l := range list {
		out = append(out, floor{what: l.what, stat: stat{wall: median(walls[k]), maxRSS: rss[k]}})
	}
	return out, nil
}

// buildEmptyGo builds `func main() {}` (once): the Go runtime's own start,
// which every row also measures next to pahole.
func buildEmptyGo(cache string) (string, error) {
	empty := filepath.Join(cache, "goempty")
	src := filepath.Join(cache, "goempty-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module goempty\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", empty, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of an empty program: %w\n%s", err, out)
	}
	return empty, nil
}

// tinyObject compiles one struct with gcc -g (once).
func tinyObject(cache string) (string, error) {
	dir := filepath.Join(cache, "tiny")
	obj := filepath.Join(dir, "tiny.o")
	if _, err := os.Stat(obj); err == nil {
		return obj, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "tiny.c")
	text := "#include <stdint.h>\ntypedef struct nec_version_info { uint64_t major, minor, patch, maintenance; char git_hash[16]; uint64_t compatibility_version; uint8_t future_fields[]; } nec_version_info_t;\nnec_version_info_t v;\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		return "", err
	}
	if err := cc.Run("", "-c", "-g", "-o", obj, src); err != nil {
		return "", fmt.Errorf("tiny.c: %w", err)
	}
	return obj, nil
}
