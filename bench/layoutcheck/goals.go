package main

import (
	"fmt"
	"io"
	"time"

	"github.com/nrtabi/nrtabi/bench/benchenv"
)

// goal is one of issue 28's goals as measured: a ratio of two tools' wall
// times, peak RSS or a speed-up, its limit, and — when it is missed — the
// measurements that say what bounds it.
type goal struct {
	input   string
	what    string
	ratio   float64
	limit   float64 // 0: no goal stated, the ratio is printed
	atLeast bool    // the ratio must be >= limit (a speed-up), else <=
	na      string  // no ratio: why (a peer not installed)
	failed  bool    // nrtabi failed the run: missed, whatever the peer did
	bound   string  // printed when missed
}

func (g goal) missed() bool {
	if g.failed {
		return true
	}
	if g.na != "" || g.limit == 0 {
		return false
	}
	if g.atLeast {
		return g.ratio < g.limit
	}
	return g.ratio > g.limit
}

func (g goal) verdict() string {
	switch {
	case g.failed:
		return "**FAILED**: " + g.na
	case g.na != "":
		return "no ratio: " + g.na
	case g.limit == 0:
		return "no goal stated"
	case g.missed():
		return "**MISSED**"
	}
	return "met"
}

func (g goal) limitText() string {
	if g.limit == 0 {
		return "—"
	}
	if g.atLeast {
		return fmt.Sprintf(">= %.2fx", g.limit)
	}
	return fmt.Sprintf("<= %.2fx", g.limit)
}

// wallRatio is a's wall over b's as a goal.
func wallRatio(input, what string, a, b stat, limit float64, bound func() string) goal {
	g := goal{input: input, what: what, limit: limit}
	switch {
	case a.na != "":
		g.na, g.failed = a.na, a.failed
	case b.na != "":
		g.na = b.na
	default:
		g.ratio = float64(a.wall) / float64(b.wall)
		if g.missed() {
			g.bound = bound()
		}
	}
	return g
}

// efficiency is how much of its cores a tool kept busy: CPU time over
// wall time times the cores it was given.
func efficiency(s stat, cores int) float64 {
	if s.wall == 0 || cores == 0 {
		return 0
	}
	return float64(s.cpu) / (float64(s.wall) * float64(cores))
}

// bigGoals are the goals of the throughput rows (issue 28 item 4).
func bigGoals(results []bigResult) []goal {
	var gs []goal
	for _, res := range results {
		r, st := res.row, res.stats
		in := r.label
		switch r.kind {
		case "directory":
			check, ph, ab := st[0], st[1], st[2]
			cause := func(peer stat, name string) func() string {
				return func() string {
					return fmt.Sprintf("check used %.0f%% of its 2 cores (CPU %s in %s wall), %s %s of CPU; %d files, %s of .debug_info",
						100*efficiency(check, 2), msd(check.cpu), msd(check.wall), name, msd(peer.cpu), r.files, size(r.debugInfo))
				}
			}
			gs = append(gs,
				wallRatio(in, "wall: check -j 2 DIR / pahole per file (xargs -P 2)", check, ph, 0.3, cause(ph, "pahole")),
				wallRatio(in, "wall: check -j 2 DIR / abidw per file (xargs -P 2)", check, ab, 0, nil))
		case "whole library":
			ex2, ph, ex1, ab := st[0], st[1], st[2], st[3]
			cause := func(peer stat, name string) func() string {
				return func() string {
					return fmt.Sprintf("extract -j 2 used %.0f%% of its 2 cores (CPU %s in %s wall) against %s's %s of CPU; %.1f MiB/s of .debug_info per core",
						100*efficiency(ex2, 2), msd(ex2.cpu), msd(ex2.wall), name, msd(peer.cpu), perCore(r.debugInfo, ex2, 2))
				}
			}
			gs = append(gs,
				wallRatio(in, "wall: extract --all -j 2 / pahole -j2", ex2, ph, 0.5, cause(ph, "pahole")),
				wallRatio(in, "wall: extract --all -j 2 / abidw", ex2, ab, 0.1, cause(ab, "abidw")))
			rss := goal{input: in, what: "peak RSS: extract --all -j 2 / pahole -j2", limit: 1}
			if ex2.na != "" {
				rss.na, rss.failed = ex2.na, ex2.failed
			} else if ph.na != "" {
				rss.na = ph.na
			} else {
				rss.ratio = float64(ex2.maxRSS) / float64(ph.maxRSS)
				if rss.missed() {
					rss.bound = fmt.Sprintf("extract %s against pahole's %s; -j 1 peaks at %s, %s of .debug_info", mib(ex2), mib(ph), mib(ex1), size(r.debugInfo))
				}
			}
			gs = append(gs, rss)
			sp := goal{input: in, what: "speed-up: extract -j 1 wall / -j 2 wall", limit: 1.7, atLeast: true}
			switch {
			case ex2.na != "":
				sp.na, sp.failed = ex2.na, ex2.failed
			case ex1.na != "":
				sp.na, sp.failed = ex1.na, ex1.failed
			default:
				sp.ratio = float64(ex1.wall) / float64(ex2.wall)
			}
			if sp.missed() && !sp.failed {
				// Amdahl on 2 cores: S = 1 / (f + (1-f)/2), so f = 2/S - 1.
				sp.bound = fmt.Sprintf("a serial fraction of %.0f%% by Amdahl (2/S − 1); CPU %s at -j 1, %s at -j 2 (%.2fx: the parallel scan's own overhead)",
					100*(2/sp.ratio-1), msd(ex1.cpu), msd(ex2.cpu), float64(ex2.cpu)/float64(ex1.cpu))
			}
			gs = append(gs, sp)
		}
	}
	return gs
}

// startupGoal is the start-up guard: nrtabi --help within 2x an empty Go
// program built in the same run.
func startupGoal(floors []floor) goal {
	var help, empty stat
	for _, f := range floors {
		switch f.what {
		case floorHelp:
			help = f.stat
		case floorEmpty:
			empty = f.stat
		}
	}
	return wallRatio("start-up guard", "wall: nrtabi --help / an empty Go program", help, empty, 2, func() string {
		return fmt.Sprintf("nrtabi --help %s (%s peak RSS) against %s (%s): the package initialisers and the binary's pages", msd(help.wall), mib(help), msd(empty.wall), mib(empty))
	})
}

// perCore is MiB of .debug_info per second of wall time per core given.
func perCore(bytes uint64, s stat, cores int) float64 {
	if s.wall == 0 || cores == 0 {
		return 0
	}
	return float64(bytes) / (1 << 20) / s.wall.Seconds() / float64(cores)
}

// reportBig prints the throughput rows' measurements and every goal, the
// missed ones marked and listed with what bounds them.
func reportBig(w io.Writer, runs int, results []bigResult, goals []goal) {
	fmt.Fprintf(w, "\nthroughput: nrtabi against pahole and abidw, each a whole process, interleaved nrtabi, peer, nrtabi, peer; median wall and CPU (user+system, children included) of %d runs after one judged warm-up run each, largest peak RSS (wait4 in csrc/measure.c: a pipeline's largest process); %s; load average %s; %s CPUs\n\n",
		runs, time.Now().UTC().Format("2006-01-02 15:04 UTC"), benchenv.LoadAvg(), benchenv.NProc())
	fmt.Fprintln(w, "| input | .debug_info | tool | cores | wall | CPU | peak RSS | MiB/s per core | note |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---|")
	for _, res := range results {
		r := res.row
		in := r.label
		if r.files > 1 {
			in += fmt.Sprintf(" (%d files)", r.files)
		}
		for k, t := range r.tools {
			s := res.stats[k]
			if s.na != "" {
				fmt.Fprintf(w, "| %s | %s | %s | %d | — | — | — | — | %s |\n", in, size(r.debugInfo), t.name, t.cores, s.na)
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %.1f | %s |\n", in, size(r.debugInfo), t.name, t.cores,
				msd(s.wall), msd(s.cpu), mib(s), perCore(r.debugInfo, s, t.cores), res.notes[k])
		}
	}
	fmt.Fprintln(w, "\ngoals (issue 28):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| input | measure | ratio | goal | |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|")
	met, rated := 0, 0
	var missed []goal
	for _, g := range goals {
		r := "—"
		if g.na == "" {
			r = fmt.Sprintf("%.2fx", g.ratio)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", g.input, g.what, r, g.limitText(), g.verdict())
		if (g.na == "" && g.limit != 0) || g.failed {
			rated++
			if g.missed() {
				missed = append(missed, g)
			} else {
				met++
			}
		}
	}
	fmt.Fprintf(w, "\ngoals met: %d of %d", met, rated)
	if len(missed) == 0 {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintln(w, "; missed:")
	for _, g := range missed {
		if g.failed {
			fmt.Fprintf(w, "- %s, %s: %s\n", g.input, g.what, g.verdict())
			continue
		}
		fmt.Fprintf(w, "- %s, %s: %.2fx (goal %s); %s\n", g.input, g.what, g.ratio, g.limitText(), g.bound)
	}
}
