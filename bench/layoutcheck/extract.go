package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
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
)

// The whole-library rows: `nrtabi extract --all` against the peers that
// emit the same structs (docs/benchmarks.md#whole-libraries).

// xTool is one command of a whole-library row.
type xTool struct {
	name  string
	bin   string
	args  []string
	cores int    // the cores it is told to use (-j)
	na    string // why it cannot run (a peer not installed)
	// judge reads a run's output (the file at out) and says what it held;
	// an error fails the run. Every timed run is judged, not only a
	// warm-up.
	judge func(s sample, out string) (count int, note string, err error)
	hash  bool // keep the first run's output hash (extract -j 1 and -j 2 must agree)
	// slowOK: a peer whose first run takes longer than -slow is timed from
	// that run alone. nrtabi's tools never are: they always get -runs.
	slowOK bool
	// fixed is a run made before the row (the peer's bounded trial) that
	// stands as the tool's only timing: it took longer than -slow.
	fixed *sample
	// notWithin: the tool was stopped at this bound in its trial; it has
	// no time and is not run in the row.
	notWithin time.Duration
}

// xResult is a row's stats in its tools' order, and the hash of each
// tool's first output (zero when not hashed).
type xResult struct {
	label     string
	debugInfo uint64
	tools     []xTool
	stats     []stat
	sums      [][32]byte
}

// measureTools runs a row's tools interleaved, run i starting with tool
// i mod n (A B A B, then B A B A), each run judged, the input read through
// once first so that no tool pays for a cold page cache alone. A tool
// whose first run took longer than slow (abidw: minutes a run) is timed
// from that run alone and its note says so.
func measureTools(ctx context.Context, o options, label, input string, tools []xTool) (xResult, error) {
	slog.Info("measuring", "row", label, "runs", o.runs)
	if err := readThrough(input); err != nil {
		return xResult{}, err
	}
	n := len(tools)
	res := xResult{label: label, tools: tools, stats: make([]stat, n), sums: make([][32]byte, n)}
	res.debugInfo, _ = debugInfoSize(input)
	walls := make([][]time.Duration, n)
	cpus := make([][]time.Duration, n)
	once := make([]bool, n)
	lo, hi := make([]int, n), make([]int, n)
	for k, t := range tools {
		st := &res.stats[k]
		switch {
		case t.notWithin > 0:
			st.notWithin, st.na = t.notWithin, t.na
		case t.na != "":
			st.na = t.na
		case t.fixed != nil:
			once[k] = true
			s := *t.fixed
			walls[k], cpus[k] = []time.Duration{s.wall}, []time.Duration{s.cpu}
			st.maxRSS, st.floor, st.runs = s.maxRSS, s.floor, 1
		}
	}
	out := filepath.Join(o.cache, "run.out")
	defer os.Remove(out)
	for i := range o.runs {
		for k := range n {
			idx := (i + k) % n
			t, st := tools[idx], &res.stats[idx]
			if st.na != "" || once[idx] {
				continue
			}
			s, err := runProc(ctx, runSpec{bin: t.bin, args: t.args, outFile: out})
			if err != nil {
				return res, err
			}
			count, note, err := t.judge(s, out)
			if err != nil {
				// Kept in the table as a failure, not dropped, and not timed:
				// no time is reported for work not done.
				st.na, st.failed = fmt.Sprintf("FAILED in run %d: %v", i+1, err), true
				if l := firstLine(s.errOut); l != "" {
					st.na += ": " + l
				}
				slog.Warn("failed; its row stays, marked", "row", label, "tool", t.name, "err", st.na)
				continue
			}
			switch {
			case i == 0:
				st.count, st.note = count, note
				lo[idx], hi[idx] = count, count
				if t.hash {
					if res.sums[idx], err = hashFile(out); err != nil {
						return res, err
					}
				}
			case count != st.count && t.hash:
				// nrtabi's output is the same whatever the run (and -j).
				st.na, st.failed = fmt.Sprintf("FAILED: run %d wrote %d structs, run 1 wrote %d", i+1, count, st.count), true
				continue
			default:
				// A peer's count may vary from run to run (pahole -j2's does
				// by one or two): kept, and the range printed.
				lo[idx], hi[idx] = min(lo[idx], count), max(hi[idx], count)
			}
			walls[idx] = append(walls[idx], s.wall)
			cpus[idx] = append(cpus[idx], s.cpu)
			st.maxRSS, st.floor = max(st.maxRSS, s.maxRSS), max(st.floor, s.floor)
			st.runs++
			if i == 0 && t.slowOK && o.slow > 0 && s.wall > o.slow && o.runs > 1 {
				once[idx] = true
				st.note = strings.TrimPrefix(st.note+"; ", "; ") + fmt.Sprintf("timed from one run: it took %.0f s, over -slow %s", s.wall.Seconds(), o.slow)
			}
		}
	}
	for k := range tools {
		st := &res.stats[k]
		if st.na != "" {
			continue
		}
		st.wall, st.cpu = median(walls[k]), median(cpus[k])
		if lo[k] != hi[k] {
			st.note = strings.TrimPrefix(st.note+"; ", "; ") + fmt.Sprintf("the count varied from run to run: %d to %d", lo[k], hi[k])
		}
		if tools[k].fixed != nil {
			st.note = strings.TrimPrefix(st.note+"; ", "; ") + fmt.Sprintf("timed from its one trial run (%.0f s, over -slow %s)", st.wall.Seconds(), o.slow)
		}
	}
	return res, nil
}

// readThrough reads path once so that its pages are cached for every tool.
func readThrough(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

func hashFile(path string) ([32]byte, error) {
	var sum [32]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// countLines counts the lines of the file at path that match.
func countLines(path string, match func(line []byte) bool) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		if match(sc.Bytes()) {
			n++
		}
	}
	return n, sc.Err()
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// extractTool is nrtabi extract --all -j N: exit 0, or 1 when some
// structs are refused by name, and [[struct]] rows written.
func extractTool(nrtabi, file string, jobs int) xTool {
	return xTool{name: fmt.Sprintf("nrtabi extract --all -j %d", jobs), bin: nrtabi, cores: jobs, hash: true,
		args: []string{"extract", "--all", "-j", fmt.Sprint(jobs), file},
		judge: func(s sample, out string) (int, string, error) {
			if s.code != 0 && s.code != 1 {
				return 0, "", fmt.Errorf("exit %d, want 0 or 1 (some structs refused)", s.code)
			}
			n, err := countLines(out, func(l []byte) bool { return bytes.HasPrefix(l, []byte("[[struct]]")) })
			if err != nil {
				return 0, "", err
			}
			if n == 0 {
				return 0, "", fmt.Errorf("exit %d and no [[struct]] written", s.code)
			}
			note := fmt.Sprintf("%d structs written", n)
			if s.code == 1 {
				note += " (some refused by name, exit 1)"
			}
			return n, note, nil
		}}
}

// paholeTool is pahole -j2 FILE, every struct it emits. pahole 1.24
// takes -j's count only attached: `-j 2 FILE` reads "2" as a struct name
// and the running kernel's BTF instead of FILE.
func paholeTool(file string) xTool {
	bin, na := peer("pahole", "dwarves")
	return xTool{name: "pahole -j2", bin: bin, na: na, cores: 2, args: []string{"-j2", file},
		judge: func(s sample, out string) (int, string, error) {
			if s.code != 0 {
				return 0, "", fmt.Errorf("exit %d", s.code)
			}
			n, err := countLines(out, paholeDefinition)
			if err != nil {
				return 0, "", err
			}
			if n == 0 {
				return 0, "", errors.New("printed no struct")
			}
			return n, fmt.Sprintf("%d structs, classes and unions printed", n), nil
		}}
}

// paholeDefinition is a line of pahole's output that opens a definition at
// the top level ("struct foo {", "class bar {", "union baz {").
func paholeDefinition(l []byte) bool {
	for _, k := range []string{"struct ", "class ", "union "} {
		if bytes.HasPrefix(l, []byte(k)) && bytes.HasSuffix(l, []byte("{")) {
			return true
		}
	}
	return false
}

// abidwDefinition is a line of abidw's XML that defines a class, struct
// or union (not a declaration only).
func abidwDefinition(l []byte) bool {
	l = bytes.TrimSpace(l)
	if !bytes.HasPrefix(l, []byte("<class-decl ")) && !bytes.HasPrefix(l, []byte("<union-decl ")) {
		return false
	}
	return !bytes.Contains(l, []byte("is-declaration-only='yes'"))
}

func abidwJudge(s sample, out string) (int, string, error) {
	if s.code != 0 {
		return 0, "", fmt.Errorf("exit %d", s.code)
	}
	corpus, err := countLines(out, func(l []byte) bool { return bytes.Contains(l, []byte("<abi-corpus")) })
	if err != nil {
		return 0, "", err
	}
	if corpus == 0 {
		return 0, "", errors.New("no <abi-corpus> written")
	}
	n, err := countLines(out, abidwDefinition)
	if err != nil {
		return 0, "", err
	}
	return n, fmt.Sprintf("%d class and union definitions written", n), nil
}

// abidwTool tries `abidw --load-all-types FILE` (every type: the work of
// extract --all) within bound, then plain `abidw FILE` (the types its
// exported symbols reach) when that did not finish; the trial run is
// judged and, when it took longer than slow, stands as the tool's timing.
// When neither finishes the tool has no time and the ratio against it is
// an upper bound.
func abidwTool(ctx context.Context, o options, file string) xTool {
	bin, na := peer("abidw", "abigail-tools")
	if na != "" {
		return xTool{name: "abidw", na: na}
	}
	out := filepath.Join(o.cache, "abidw-trial.out")
	defer os.Remove(out)
	var tried []string
	for _, args := range [][]string{{"--load-all-types", file}, {file}} {
		name := "abidw " + strings.Join(args[:len(args)-1], " ")
		name = strings.TrimSpace(name)
		t := xTool{name: name, bin: bin, args: args, cores: 1, judge: abidwJudge, slowOK: true}
		slog.Info("peer trial", "tool", name, "file", file, "bound", o.abidwBound)
		s, err := runProc(ctx, runSpec{bin: bin, args: args, outFile: out, timeout: o.abidwBound})
		if err != nil {
			t.na = err.Error()
			return t
		}
		if s.timedOut {
			tried = append(tried, fmt.Sprintf("`%s` did not finish within %s", name, o.abidwBound))
			continue
		}
		if _, _, err := abidwJudge(s, out); err != nil {
			t.na = fmt.Sprintf("%s failed its trial: %v: %s", name, err, firstLine(s.errOut))
			return t
		}
		if len(tried) > 0 {
			t.name += " (" + strings.Join(tried, "; ") + ")"
		}
		if o.slow > 0 && s.wall > o.slow {
			t.fixed = &s
		}
		return t
	}
	return xTool{name: "abidw --load-all-types, then abidw", bin: bin, cores: 1, notWithin: o.abidwBound, na: strings.Join(tried, "; ")}
}

// debugInfoSize is the uncompressed size of path's .debug_info.
func debugInfoSize(path string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := f.Section(".debug_info")
	if s == nil {
		return 0, nil
	}
	return s.Size, nil
}

// peer finds a peer tool on PATH; when it is not there the tool stays in
// the row with the reason printed in place of its numbers.
func peer(name, pkg string) (bin, na string) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Sprintf("%s not installed (apt-get install %s)", name, pkg)
	}
	return p, ""
}

// printTools prints a row's measurements, one line per tool, every tool
// kept (a failure or a missing peer with its reason).
func printTools(w io.Writer, res xResult) {
	for k, t := range res.tools {
		s := res.stats[k]
		if s.na != "" {
			fmt.Fprintf(w, "| %s | %s | %s | %d | — | — | — | — | — | %s |\n", res.label, size(res.debugInfo), t.name, t.cores, s.na)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %s | %s | %s | %d | %s |\n", res.label, size(res.debugInfo), t.name, t.cores, s.runs,
			msd(s.wall), msd(s.cpu), rssText(s), s.count, s.note)
	}
}

const toolHeader = "| input | .debug_info | tool | cores | runs | wall (median) | CPU (median) | peak RSS | structs | note |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|"

// rssText is a peak RSS reading, marked when it is the bench's floor.
func rssText(s stat) string {
	if s.na != "" {
		return "—"
	}
	if s.atFloor() {
		return fmt.Sprintf("≤ %s (the bench's floor)", mibBytes(s.maxRSS))
	}
	return mibBytes(s.maxRSS)
}
