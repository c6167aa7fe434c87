package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The quick-lookup rows: one struct of a file, and nrtabi --help, timed
// by hyperfine (-N: no shell between it and the process, warm-up runs
// first, the median read from its --export-json). Each command is run and
// judged once first: hyperfine times what it is given and checks nothing
// but the exit status.

// lookup is one hyperfine row: nrtabi's command against a peer's.
type lookup struct {
	input, what string
	nrtabi      []string // argv
	peerName    string
	peer        []string // argv
	limit       float64
	judgeNrtabi func(s sample) error
	judgePeer   func(s sample) error
}

// showLookup is `nrtabi show NAME FILE` against `pahole -C PNAME FILE`.
func showLookup(o options, nrtabi, pahole, label, file, name, pname string) lookup {
	cname := pname
	if strings.ContainsAny(pname, ",") {
		// pahole splits a -C list at commas, which C++ template names hold:
		// the name goes in a file, one a line.
		p := filepath.Join(o.cache, "pahole-names-"+strings.NewReplacer("<", "_", ">", "_", ":", "_", " ", "", ",", "_").Replace(name)+".txt")
		_ = os.WriteFile(p, []byte(pname+"\n"), 0o644)
		cname = "file://" + p
	}
	return lookup{input: label, what: "nrtabi show " + name + " / pahole -C", nrtabi: []string{nrtabi, "show", name, file},
		peerName: "pahole -C", peer: []string{pahole, "-C", cname, file}, limit: 1.5,
		judgeNrtabi: func(s sample) error {
			if s.code&^12 != 0 || !bytes.Contains(s.out, []byte("/* size: ")) {
				return fmt.Errorf("exit %d, no layout printed", s.code)
			}
			return nil
		},
		judgePeer: func(s sample) error {
			// pahole 1.24 prints only "typedef union pthread_mutex_t;" for a
			// typedef of an anonymous union: that is its answer, and it counts.
			if s.code != 0 || !bytes.Contains(s.out, []byte("/* size: ")) && typedefLine.Count(s.out) == 0 {
				return fmt.Errorf("exit %d, no layout printed", s.code)
			}
			return nil
		}}
}

// helpLookup is nrtabi --help against an empty Go program (the Go
// runtime's own start): goal <= 2x.
func helpLookup(nrtabi, empty string) lookup {
	zero := func(s sample) error {
		if s.code != 0 {
			return fmt.Errorf("exit %d", s.code)
		}
		return nil
	}
	return lookup{input: "start-up", what: "nrtabi --help / an empty Go program", nrtabi: []string{nrtabi, "--help"},
		peerName: "empty Go program", peer: []string{empty}, limit: 2, judgeNrtabi: zero, judgePeer: zero}
}

// lookupDir is where the lookups run: the temporary directory, as a user
// runs nrtabi (not from this checkout, where step 3 of
// docs/nrtabi.md#naming-a-spec reads the checkout's spec files on every
// run; docs/benchmarks.md#start-up-zstd-2026-12-04 has both).
func lookupDir() string { return os.TempDir() }

// shellWord quotes s for hyperfine's command-line splitting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=+-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func commandLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellWord(a)
	}
	return strings.Join(q, " ")
}

// hyperfineResult is the part of hyperfine's --export-json the bench reads.
type hyperfineResult struct {
	Results []hyperfineRun `json:"results"`
}

type hyperfineRun struct {
	Command string    `json:"command"`
	Median  float64   `json:"median"`
	Stddev  float64   `json:"stddev"`
	Times   []float64 `json:"times"`
}

// lookupRows runs every lookup's judged runs and then hyperfine on the
// pair, and prints a row per lookup with its ratio and verdict. Without
// hyperfine the rows are printed with the reason and no numbers.
func lookupRows(ctx context.Context, w io.Writer, o options, rows []lookup) ([]goal, error) {
	hf, err := exec.LookPath("hyperfine")
	if err != nil {
		fmt.Fprintln(w, "hyperfine is not installed (apt-get install hyperfine): the quick-lookup rows are skipped, each printed with that reason.")
	} else {
		fmt.Fprintf(w, "hyperfine -N --warmup %d --runs %d, nrtabi's command then the peer's (hyperfine runs each command's runs together, not interleaved); median wall time from --export-json; run from %s, outside any checkout (inside one, --spec NAME first compares the checkout's spec files with the embedded ones: docs/nrtabi.md#naming-a-spec).\n", o.warmup, o.lookupRuns, lookupDir())
	}
	fmt.Fprintln(w, "\n| input | nrtabi | nrtabi median (σ) | peer | peer median (σ) | runs |\n|---|---|---:|---|---:|---:|")
	var goals []goal
	for _, l := range rows {
		g := goal{input: l.input, what: "wall: " + l.what, limit: l.limit}
		if hf == "" {
			g.na = "hyperfine not installed (apt-get install hyperfine)"
			fmt.Fprintf(w, "| %s | %s | — | %s | — | — |\n", l.input, commandLine(l.nrtabi[1:]), l.peerName)
			goals = append(goals, g)
			continue
		}
		a, b, err := hyperfinePair(ctx, o, hf, l, &g)
		if err != nil {
			return nil, err
		}
		if g.na == "" {
			g.ratio = a.Median / b.Median
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d |\n", l.input, "nrtabi "+commandLine(l.nrtabi[1:]), secs(a, g.na), l.peerName, secs(b, g.na), len(a.Times))
		goals = append(goals, g)
	}
	printGoals(w, goals)
	return goals, nil
}

func secs(r hyperfineRun, na string) string {
	if na != "" {
		return "—"
	}
	d := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	return fmt.Sprintf("%s (%s)", msd(d(r.Median)), msd(d(r.Stddev)))
}

// hyperfinePair judges both commands once, then times them with
// hyperfine; a failed judgement or hyperfine run is set on g (kept, not
// dropped).
func hyperfinePair(ctx context.Context, o options, hf string, l lookup, g *goal) (a, b hyperfineRun, err error) {
	slog.Info("hyperfine", "row", l.what, "input", l.input)
	ignore := false
	for k, argv := range [][]string{l.nrtabi, l.peer} {
		s, err := runProc(ctx, runSpec{bin: argv[0], args: argv[1:], timeout: time.Minute})
		if err != nil {
			return a, b, err
		}
		judge := l.judgeNrtabi
		if k == 1 {
			judge = l.judgePeer
		}
		if err := judge(s); err != nil {
			g.na = fmt.Sprintf("%s failed its judged run: %v: %s", commandLine(argv), err, firstLine(s.errOut))
			g.failed = k == 0
			return a, b, nil
		}
		ignore = ignore || s.code != 0 // show's exit bits 4 and 8 are findings
	}
	out := filepath.Join(o.cache, "hyperfine.json")
	args := []string{"-N", "--style", "none", "--warmup", fmt.Sprint(o.warmup), "--runs", fmt.Sprint(o.lookupRuns), "--export-json", out}
	if ignore {
		args = append(args, "--ignore-failure")
	}
	args = append(args, commandLine(l.nrtabi), commandLine(l.peer))
	cmd := exec.CommandContext(ctx, hf, args...)
	cmd.Dir = lookupDir()
	if msg, err := cmd.CombinedOutput(); err != nil {
		g.na = fmt.Sprintf("hyperfine failed: %v: %s", err, firstLine(msg))
		return a, b, nil
	}
	text, err := os.ReadFile(out)
	if err != nil {
		return a, b, err
	}
	var res hyperfineResult
	if err := json.Unmarshal(text, &res); err != nil || len(res.Results) != 2 {
		return a, b, fmt.Errorf("%s: hyperfine's --export-json: %v (%d results, want 2)", out, err, len(res.Results))
	}
	return res.Results[0], res.Results[1], nil
}
