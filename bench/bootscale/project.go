package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/bench/bootsim"
	"github.com/nrtabi/nrtabi/generated/abi"
)

// interNodeHop is a message's latency between nodes (about 15 us over EFA,
// docs/sources.md#ref-scale).
const interNodeHop = 15e-6

// scaleRecord is the per-record cost past one host: a 112-byte peer record
// at 10 Gb/s.
const scaleRecord = 112 * 8 / 10e9

// ncclStagger is NCCL's connect rate per root (NCCL_UID_STAGGER_RATE).
const ncclStagger = 7000

// published are the anchors of docs/sources.md#ref-scale.
var published = []struct{ what, figure string }{
	{"upstream NCCL, stated goal (fast bootstrap, ~128-256 ranks per root)", "< 30 s at 100k GPUs"},
	{"PyTorch TCPStore, libuv backend", "~100 s for 96k ranks"},
	{"stock NCCL at ~96k GPUs (secondary summary of arXiv 2510.20171)", "~265 s"},
	{"Gloo (pytorch/gloo PR 408)", "85 s at 8k ranks"},
	{"NCCL 2.22.3 on one host of 8 GPUs (a user report), bootstrap of a 2.46 s init", "1.60 s at 8"},
}

// usersReport is the goal statement's "users report 2.5-minute inits paid
// on every restart": no public source states it
// (docs/sources.md#ref-scale-users), so it is printed and plotted as the
// users' report, apart from the published anchors, with no world size.
const usersReport = "users' report, no public source: 2.5-minute inits paid on every restart (no N given)"

// targetRanksPerCore is the target's shape (docs/benchmarks.md#the-simulator):
// one rank process per core, on as many hosts as that takes, so the CPU a
// phase queues is spread over N cores, not the measuring host's few.
const targetRanksPerCore = 1

// scaleParams are p in the target's shape: a core per rank (Cores 0), so a
// message costs its fitted latency plus its own CPU on the rank's core
// plus the wire's latency between nodes; a bidirectional step its fitted
// extra plus the second message's CPU; a rank's start its own CPU; the
// star's table its bytes on the root's wire; the spec's listen backlog,
// Linux's 1 s first SYN retransmit. The ranks' own connect delays are
// left out: the columns are the roots' accept scenarios. The latency-shaped
// terms (per busy rank) have no busy neighbours to wait for: 0.
func scaleParams(p bootsim.Params, _ float64) bootsim.Params {
	s := p
	s.Cores = 0                                                         // targetRanksPerCore: one core per rank
	s.Hop = p.Hop + p.Work + p.WakeWork + p.HopPerActive + interNodeHop // every receive sleeps for the wire
	s.HopPerActive = 0
	s.BidiExtra = p.BidiExtra + p.Work + p.WakeWork + 2*p.BidiWork // the second message, and both messages' extra, on the rank's own core
	s.WakeFixed = p.WakeFixed + p.Wake
	s.Wake = 0
	s.Record = scaleRecord
	s.Table = 0
	s.Backlog = int(abi.BootstrapListenBacklog)
	s.Retry = 1
	s.RankDelay = false
	// a core per rank: no run queue to wait in, no crowd to share the
	// caches with (docs/benchmarks.md#the-simulator-2026-12-04-night)
	s.Runnable, s.RunWait = 0, 0
	// agreement is the agree phase's end: after the boot, the split group
	// comm's tree and hypercube (docs/bootstrap.md#group-comm-split)
	s.PerNC = true
	return s
}

// design is one column of the projection.
type design struct {
	name  string
	algo  bootsim.Algo
	bidi  bool
	multi bool
}

var designs = []design{
	{"star", bootsim.Star, false, false},
	{"flat", bootsim.Flat, false, false}, {"flat-bidi", bootsim.Flat, true, false},
	{"hier", bootsim.Hier, false, false}, {"hier-bidi", bootsim.Hier, true, false},
	{"mroot", bootsim.Hier, false, true}, {"mroot-bidi", bootsim.Hier, true, true},
}

// predict is design d at n ranks (L by the policy) under p.
func predict(d design, policy string, n int, p bootsim.Params) (bootsim.Result, int, error) {
	l, err := perInstance(policy, n)
	if err != nil {
		return bootsim.Result{}, 0, err
	}
	pt := bootsim.Point{Algo: d.algo, N: n, L: l, Bidi: d.bidi}
	if d.multi {
		pt.Roots = bootsim.RootsFor(bootsim.Hier, n, l)
	}
	r, err := pt.Sim(p)
	return r, pt.Roots, err
}

// project is `make bench-bootstrap-project`: the projection and the plot
// from the committed fitted file, never from a fit no one committed.
func project(ctx context.Context, o options, out io.Writer) error {
	if err := committed(ctx, o.fitted); err != nil {
		return err
	}
	f, err := bootsim.LoadFitted(o.fitted)
	if err != nil {
		return err
	}
	cores, err := strconv.Atoi(f.NProc)
	if err != nil || cores < 1 || cores > 1<<16 {
		return fmt.Errorf("%s: nproc %q is not a CPU count", o.fitted, f.NProc)
	}
	fmt.Fprintf(out, "projection from %s (committed): fitted %s on %d CPUs, load %s, rows of N <= %d\n", o.fitted, f.Date, cores, f.Load, f.FitMaxN)
	for _, lang := range []struct {
		name string
		p    bootsim.Params
	}{{"go", f.Go}, {"c", f.C}} {
		s := scaleParams(lang.p, float64(cores))
		fmt.Fprintf(out, "\n%s ranks in the target's shape, %d rank per core (not the %d-core measuring host's), ", lang.name, targetRanksPerCore, cores)
		fmt.Fprintf(out, "(a hop of %.1f us, %.1f us more per bidirectional step, wake-up %.1f us, root accept %.1f us per rank, 112-B records at 10 Gb/s, listen backlog %d, SYN retry 1 s doubling; L = %s; mroot: R = ceil(N/%d) roots, at most one per instance), seconds to agreement (the boot, then the split group comm's tree and hypercube):\n",
			s.Hop*1e6, s.BidiExtra*1e6, s.WakeFixed*1e6, s.Accept*1e6, s.Backlog, policyText(o.perInstance), tcpRanksPerRoot)
		for _, stagger := range []float64{0, ncclStagger} {
			s.Stagger = stagger
			what := "all connect at once"
			if stagger > 0 {
				what = fmt.Sprintf("staggered, %.0f connects a second per root (NCCL_UID_STAGGER_RATE)", stagger)
			}
			fmt.Fprintf(out, "  %s:\n  %7s %5s %5s", what, "N", "L", "R")
			for _, d := range designs {
				fmt.Fprintf(out, " %10s", d.name)
			}
			fmt.Fprintln(out)
			for _, n := range []int{1000, 10000, 100000} {
				l, _ := perInstance(o.perInstance, n)
				fmt.Fprintf(out, "  %7d %5d %5d", n, l, bootsim.RootsFor(bootsim.Hier, n, l))
				for _, d := range designs {
					r, _, err := predict(d, o.perInstance, n, s)
					if err != nil {
						return err
					}
					fmt.Fprintf(out, " %10.2f", r.Seconds)
				}
				fmt.Fprintln(out)
			}
		}
		s.Stagger = ncclStagger
		best, bestName := math.Inf(1), ""
		for _, d := range designs {
			r, _, err := predict(d, o.perInstance, 100000, s)
			if err != nil {
				return err
			}
			if r.Seconds < best {
				best, bestName = r.Seconds, d.name
			}
		}
		verdict := "met"
		if best > 5 {
			verdict = "MISSED"
		}
		fmt.Fprintf(out, "  goal: agreement at 100k ranks, staggered, <= 5 s: %s %.2f s (%s)\n", bestName, best, verdict)
	}
	fmt.Fprintln(out, "\npublished anchors (docs/sources.md#ref-scale):")
	for _, a := range published {
		fmt.Fprintf(out, "  %-86s %s\n", a.what, a.figure)
	}
	fmt.Fprintf(out, "not a published figure (docs/sources.md#ref-scale-users):\n  %-86s %s\n", usersReport, "~150 s")
	if o.svg != "" {
		if err := writePlot(o.svg, o.perInstance, f); err != nil {
			return err
		}
		fmt.Fprintf(out, "plot: %s\n", o.svg)
	}
	return nil
}

// committed refuses a fitted file git does not hold as it is on disk: the
// projection is made from committed parameters only.
func committed(ctx context.Context, path string) error {
	if out, err := exec.CommandContext(ctx, "git", "ls-files", "--error-unmatch", "--", path).CombinedOutput(); err != nil {
		return fmt.Errorf("%s is not committed (git ls-files: %s): run make bench-bootstrap, commit the file, then project", path, strings.TrimSpace(string(out)))
	}
	out, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--", path).Output()
	if err != nil {
		return fmt.Errorf("git status %s: %w", path, err)
	}
	if len(strings.TrimSpace(string(out))) != 0 {
		return errors.New(path + " differs from the committed one: commit it (or git checkout it) before the projection")
	}
	return nil
}

// measuredSeries are the rows' medians by variant, in N order.
func measuredSeries(f *bootsim.Fitted) (names []string, by map[string][]bootsim.MeasuredRow) {
	by = map[string][]bootsim.MeasuredRow{}
	for _, r := range f.Rows {
		if by[r.Variant] == nil {
			names = append(names, r.Variant)
		}
		by[r.Variant] = append(by[r.Variant], r)
	}
	for _, rs := range by {
		sort.Slice(rs, func(i, j int) bool { return rs[i].N < rs[j].N })
	}
	return names, by
}
