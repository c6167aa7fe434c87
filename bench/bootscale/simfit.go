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

// errNotFitted: a run with no row to fit keeps its table and writes no file.
var errNotFitted = errors.New("not fitted")

// tcpRanksPerRoot is BOOTSTRAP_RANKS_PER_ROOT as bootsim restates it.
const tcpRanksPerRoot = bootsim.RanksPerRoot

// simGoal is the simulator's validation goal (docs/benchmarks.md#the-simulator):
// a prediction within 25 % of the measured point.
const simGoal = 0.25

// noiseFloor: a row measured below it is graded against an absolute
// tolerance (simGoal of the floor, 1.25 ms) as well as the 25 %: at a few
// milliseconds one scheduler delay of this 2-core host is a quarter of the
// time (docs/benchmarks.md#hierarchical-bootstrap). Both are printed; the
// grade is continuous at the floor (25 % of 5 ms is the tolerance).
const noiseFloor = 5e-3

// simTol is the absolute tolerance of a row below noiseFloor.
const simTol = simGoal * noiseFloor

// within says whether a prediction of a row measured at sec seconds with
// relative error e meets the goal, and how: by the 25 % or, below the
// noise floor, by the absolute tolerance.
func within(sec, e float64) (ok bool, how string) {
	if math.Abs(e) <= simGoal {
		return true, ""
	}
	if sec < noiseFloor && math.Abs(e)*sec <= simTol {
		return true, fmt.Sprintf("  within %.2f ms of a %.1f ms row (below the %.0f ms noise floor; %+.0f%%)", simTol*1e3, sec*1e3, noiseFloor*1e3, e*100)
	}
	return false, ""
}

// missCause says what a missed row is made of, as far as this host's
// traces tell (docs/benchmarks.md#hierarchical-bootstrap).
func missCause(p bootsim.Point, e float64) string {
	switch {
	case p.Seconds < 0.015:
		return fmt.Sprintf("%.1f ms in all, a few scheduling delays of this host", p.Seconds*1e3)
	case p.Algo == bootsim.Star && e < 0:
		return "its root's replies cost more at this N than the fitted per-rank reply says"
	case p.Algo == bootsim.Star:
		return "the fitted per-rank reply overcharges this one"
	case p.Algo == bootsim.Flat && !p.Bidi && e > 0:
		return "a receive that finds its message already queued costs no wake-up: past 64 ranks on 2 cores fewer receives block (voluntary switches per message, docs/benchmarks.md#the-simulator), which one CPU cost per message does not see"
	case e < 0:
		return "the row spends time the model has no cost for (a host past its cores: more ranks than the run queue's fitted cost says)"
	}
	return "the model charges a cost this row does not pay in full"
}

func pointOf(r bootsim.MeasuredRow) (bootsim.Point, error) {
	a, err := bootsim.ParseAlgo(r.Algo)
	if err != nil {
		return bootsim.Point{}, err
	}
	pt := bootsim.Point{Algo: a, N: r.N, L: r.L, Bidi: r.Bidi, Roots: r.Roots, Seconds: r.BootMs / 1000}
	if useAvail {
		pt.Avail = r.Avail // measured around the run; 0 in older rows: taken as 1
	}
	return pt, nil
}

// useAvail: the fit and the grades take each row's measured share of the
// host (-avail=false: as if every row had the whole host, to show what the
// measured input buys).
var useAvail = true

func costs(p bootsim.Params) string {
	return fmt.Sprintf("on %d cores: fixed %.2f ms, root accept %.1f us and reply %.1f us per rank, ring hop %.1f us (+%.1f us per bidirectional step), wake-up %.1f us; CPU %.1f us per message (+%.1f us if its receiver slept, +%.1f us both ways round), %.1f us per rank start; star table %.3f us per record per rank",
		p.Cores, p.Fixed*1e3, p.Accept*1e6, p.Reply*1e6, p.Hop*1e6, p.BidiExtra*1e6, p.WakeFixed*1e6, p.Work*1e6, p.WakeWork*1e6, p.BidiWork*1e6, p.StartWork*1e6, p.Table*1e6)
}

// refit is -refit: the committed rows refitted under the current model,
// no world run, the file rewritten (commit it before the projection).
func refit(_ context.Context, o options, out io.Writer) error {
	f, err := bootsim.LoadFitted(o.fitted)
	if err != nil {
		return err
	}
	f.FitMaxN = o.fitMax
	if o.merge != "" {
		if err := mergeRows(f, o.merge); err != nil {
			return err
		}
	}
	exclude := o.fitExclude
	if exclude == "" {
		// the rows the measuring run kept out of its fit stay out, for the
		// reason it recorded
		var kept []string
		for k, why := range f.Notes {
			if name, ok := strings.CutPrefix(k, "fit-exclude "); ok {
				kept = append(kept, name+"="+strings.ReplaceAll(why, ",", ";"))
			}
		}
		sort.Strings(kept)
		exclude = strings.Join(kept, ",")
	}
	fmt.Fprintf(out, "refit of the rows in %s (measured %s, nproc %s, load %s)\n", o.fitted, f.Date, f.NProc, f.Load)
	if err := fitAndValidate(out, f, exclude); err != nil {
		return err
	}
	return bootsim.SaveFitted(o.fitted, f)
}

// cpuSplit is the least-squares split (on relative error) of the
// measured CPU of the rows of lang of at most maxN ranks into a part per
// rank process, a part per voluntary context switch and a part per ring
// message of the world, in seconds
// (docs/benchmarks.md#the-simulator): a message that must sleep for its
// frame pays the wake-up, the switch's share; one whose frame was queued
// pays the message's share (a Go rank's is about nothing: the split gives
// it below 0, kept at 0; a C host's poll and read are not). ok is false when fewer than 4 rows carry the counts (rows
// measured before they were) or a rank or a switch comes out free.
func cpuSplit(rows []bootsim.MeasuredRow, agreePath, lang string, maxN int, excluded map[string]string) (perRank, perSwitch, perMsg float64, ok bool) {
	// the world's ring messages: the boot's two gathers, and, before the
	// group's comm was split from the world's (docs/bootstrap.md#group-comm-split),
	// as many again in the agree phase, whose group comm init was a second
	// bootstrap of the same shape (docs/bootstrap.md#group-comm-init)
	gathers := 4
	if agreePath == "split" {
		gathers = 2
	}
	var x [][]float64
	var y []float64
	for _, r := range rows {
		if r.Lang != lang || r.N > maxN || excluded[r.Variant] != "" || r.CPUMs <= 0 || r.Nvcsw <= 0 {
			continue
		}
		a, err := bootsim.ParseAlgo(r.Algo)
		if err != nil {
			continue
		}
		x = append(x, []float64{float64(r.N), r.Nvcsw, bootsim.Messages(a, r.N, r.L, r.Bidi, gathers)})
		y = append(y, r.CPUMs/1e3)
	}
	if len(x) < 4 {
		return 0, 0, 0, false
	}
	th, err := bootsim.RelLeastSquares(x, y)
	if err != nil {
		return 0, 0, 0, false
	}
	perRank, perSwitch, perMsg = th[0], th[1], max(th[2], 0)
	return perRank, perSwitch, perMsg, perRank > 0 && perSwitch > 0 && perSwitch < 1e-2 && perMsg < 1e-2
}

// grade is -grade: another run's rows graded under the committed costs,
// nothing fitted or written: a check of the committed model on rows it
// never saw (every one a validation row).
func grade(ctx context.Context, o options, out io.Writer) error {
	if err := committed(ctx, o.fitted); err != nil {
		return err
	}
	f, err := bootsim.LoadFitted(o.fitted)
	if err != nil {
		return err
	}
	g, err := bootsim.LoadFitted(o.grade)
	if err != nil {
		return err
	}
	if g.NProc != f.NProc {
		return fmt.Errorf("-grade %s: measured on %s CPUs, the costs on %s", o.grade, g.NProc, f.NProc)
	}
	fmt.Fprintf(out, "the rows of %s (measured %s, load %s) under the committed costs of %s (fitted on N <= %d of %s), nothing refitted:\n", o.grade, g.Date, g.Load, o.fitted, f.FitMaxN, f.Date)
	h := *f
	h.Rows = g.Rows
	all := map[string]string{}
	for _, r := range g.Rows {
		all[r.Variant] = "not in the fit"
	}
	return printGrades(out, &h, all)
}

// fitAgreeWork is the AgreeWork minimising the summed |log(simulated /
// measured)| of the agree points under p: a scan of 1 us .. 100 ms in
// steps of 10^0.05, then a golden refinement about the best; 0 when no
// point is given.
func fitAgreeWork(p bootsim.Params, pts []bootsim.Point) (float64, error) {
	if len(pts) == 0 {
		return 0, nil
	}
	p.PerNC = true
	loss := func(w float64) (float64, error) {
		q := p
		q.AgreeWork = w
		var s float64
		for _, pt := range pts {
			e, err := bootsim.RelErr(q, pt)
			if err != nil {
				return 0, err
			}
			s += math.Abs(math.Log1p(max(e, -1+1e-12)))
		}
		return s, nil
	}
	best, bestL := 0.0, math.Inf(1)
	for e := -6.0; e <= -1; e += 0.05 {
		w := math.Pow(10, e)
		l, err := loss(w)
		if err != nil {
			return 0, err
		}
		if l < bestL {
			best, bestL = w, l
		}
	}
	if l0, err := loss(0); err != nil {
		return 0, err
	} else if l0 <= bestL {
		return 0, nil
	}
	lo, hi := best/math.Pow(10, 0.05), best*math.Pow(10, 0.05)
	for i := 0; i < 40; i++ {
		a, b := lo+(hi-lo)*0.382, lo+(hi-lo)*0.618
		la, err := loss(a)
		if err != nil {
			return 0, err
		}
		lb, err := loss(b)
		if err != nil {
			return 0, err
		}
		if la < lb {
			hi = b
		} else {
			lo = a
		}
	}
	return (lo + hi) / 2, nil
}

// mergeRows adds another run's rows to f, each run's date and load noted:
// a variant measured at the same size in both is refused (which median
// would be the row?), and so is a run on a host of another shape.
func mergeRows(f *bootsim.Fitted, path string) error {
	g, err := bootsim.LoadFitted(path)
	if err != nil {
		return err
	}
	if g.NProc != f.NProc {
		return fmt.Errorf("-merge %s: measured on %s CPUs, the rows here on %s: one host's shape per file", path, g.NProc, f.NProc)
	}
	if g.AgreePath != f.AgreePath {
		return fmt.Errorf("-merge %s: its worlds' group comm was %q, the rows here %q: one agree path per file", path, g.AgreePath, f.AgreePath)
	}
	have := map[[2]string]bool{}
	for _, r := range f.Rows {
		have[[2]string{r.Variant, strconv.Itoa(r.N)}] = true
	}
	var sizes []string
	for _, r := range g.Rows {
		k := [2]string{r.Variant, strconv.Itoa(r.N)}
		if have[k] {
			return fmt.Errorf("-merge %s: %s at N=%d is in both files", path, r.Variant, r.N)
		}
		have[k] = true
		f.Rows = append(f.Rows, r)
		sizes = append(sizes, r.Variant+"@"+k[1])
	}
	if f.Notes == nil {
		f.Notes = map[string]string{}
	}
	f.Notes["merged "+g.Date] = fmt.Sprintf("rows %s from a run of %s, load %s", strings.Join(sizes, " "), g.Date, g.Load)
	for k, v := range g.Notes { // what that run said of its rows stays with them
		f.Notes["merged "+g.Date+": "+k] = v
	}
	return nil
}

// fitAndValidate fits f.Go to the Go rows (the star's included) and f.C to
// the C hosts' rows of at most f.FitMaxN ranks, prints every row's error
// (the larger rows are the validation) and the misses, each named.
func fitAndValidate(out io.Writer, f *bootsim.Fitted, exclude string) error {
	excluded := map[string]string{}
	for _, kv := range strings.Split(exclude, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		name, why, ok := strings.Cut(kv, "=")
		if !ok || why == "" {
			return fmt.Errorf("-fit-exclude %q: want name=reason", kv)
		}
		excluded[strings.TrimSpace(name)] = why
		if f.Notes == nil {
			f.Notes = map[string]string{}
		}
		f.Notes["fit-exclude "+strings.TrimSpace(name)] = why
		fmt.Fprintf(out, "%s: rows not fitted (%s); graded as validation\n", name, why)
	}
	// boot: the address all-gather, then the 112-byte peer records'; the
	// default framing has no RING_DONE / COMPLETE round; the ranks' own
	// connect delays (docs/bootstrap-hierarchy.md#stagger) are known.
	// The host's shape: its cores, shared by every rank process
	// (docs/benchmarks.md#the-simulator).
	cores, err := strconv.Atoi(f.NProc)
	if err != nil || cores < 1 || cores > 1<<16 {
		return fmt.Errorf("nproc %q is not a CPU count: the simulator needs the measuring host's cores", f.NProc)
	}
	base := bootsim.Params{Gathers: 2, RankDelay: true, Cores: cores}
	fmt.Fprintf(out, "\nsimulator (bench/bootsim) on boot, fitted to the rows of N <= %d only; every larger row is a validation:\n", f.FitMaxN)
	for _, lang := range []string{"go", "c"} {
		var train []bootsim.Point
		for _, r := range f.Rows {
			if r.Lang != lang || r.N > f.FitMaxN || excluded[r.Variant] != "" {
				continue
			}
			pt, err := pointOf(r)
			if err != nil {
				return err
			}
			train = append(train, pt)
		}
		if lang == "go" && len(train) == 0 {
			fmt.Fprintf(out, "  no Go row of N <= %d was measured: not fitted, nothing written\n", f.FitMaxN)
			return errNotFitted
		}
		lb := base
		if perRank, perSwitch, perMsg, ok := cpuSplit(f.Rows, f.AgreePath, lang, f.FitMaxN, excluded); ok {
			// measured, not fitted to the times: what a wake-up and a
			// queued message cost the cores
			lb.WakeWork, lb.Work = perSwitch, perMsg
			fmt.Fprintf(out, "  %s: a world's CPU (rusage, the rows of N <= %d) is %.2f ms per rank + %.1f us per voluntary switch + %.1f us per ring message: a receive that sleeps pays the switch, one whose frame was queued the message\n",
				lang, f.FitMaxN, perRank*1e3, perSwitch*1e6, perMsg*1e6)
		}
		p, err := bootsim.Fit(lb, train)
		if err != nil {
			if lang == "go" {
				return fmt.Errorf("the simulator could not be fitted to the Go rows: %w", err)
			}
			fmt.Fprintf(out, "  c: not fitted: %v (the C rows are graded on the Go costs)\n", err)
			p = f.Go
		}
		if lang == "go" {
			f.Go = p
		} else {
			f.C = p
		}
		fmt.Fprintf(out, "  %s (%d rows): %s\n", lang, len(train), costs(p))
	}
	if err := printGrades(out, f, excluded); err != nil {
		return err
	}
	return printAgreeGrades(out, f)
}

// printAgreeGrades grades the agree column under the boot's fitted costs,
// nothing fitted to it: a split world's agree phase is the global comm's
// tree AND-reduce and hypercube over the world
// (docs/bootstrap.md#group-comm-split), each round n messages
// (bootsim.Params.PerNC). Rows measured before the split, whose group ran
// a second bootstrap, are not graded: the model has no such phase.
func printAgreeGrades(out io.Writer, f *bootsim.Fitted) error {
	if f.AgreePath != "split" {
		fmt.Fprintln(out, "agree: these worlds' replica group ran a second bootstrap (before the split comm): not graded")
		return nil
	}
	// one cost more, fitted on the agree rows of N <= FitMaxN alone: each
	// rank's setup of the global comm (CPU on the cores)
	for _, lang := range []string{"go", "c"} {
		p := &f.Go
		if lang == "c" {
			p = &f.C
		}
		var pts []bootsim.Point
		for _, r := range f.Rows {
			if r.Lang != lang || r.Algo == "star" || r.N > f.FitMaxN {
				continue
			}
			pt, err := pointOf(r)
			if err != nil {
				return err
			}
			pt.Seconds = r.AgreeMs / 1e3
			pts = append(pts, pt)
		}
		w, err := fitAgreeWork(*p, pts)
		if err != nil {
			return err
		}
		p.AgreeWork = w
		fmt.Fprintf(out, "\n%s: the agree phase's setup, fitted on %d agree rows of N <= %d: %.1f us of CPU a rank", lang, len(pts), f.FitMaxN, w*1e6)
	}
	fmt.Fprintln(out, "\nagree (the split group comm's setup, tree and hypercube after the boot), under the boot's costs and that one:")
	fmt.Fprintf(out, "%14s %5s %4s %3s %12s %12s %9s\n", "variant", "N", "L", "R", "measured ms", "sim ms", "error")
	miss, n, worst := 0, 0, 0.0
	for _, r := range f.Rows {
		if r.Algo == "star" {
			continue // the naive star has no agree phase of its own
		}
		pt, err := pointOf(r)
		if err != nil {
			return err
		}
		pt.Seconds = r.AgreeMs / 1e3
		p := f.Go
		if r.Lang == "c" {
			p = f.C
		}
		p.PerNC = true
		res, err := pt.Sim(p)
		if err != nil {
			return err
		}
		e := (res.Seconds - pt.Seconds) / pt.Seconds
		mark := ""
		if ok, how := within(pt.Seconds, e); !ok {
			mark = "  MISSED"
			if r.N > f.FitMaxN {
				miss++
			}
		} else {
			mark = how
		}
		if r.N > f.FitMaxN {
			n++
			worst = max(worst, math.Abs(e))
		}
		fmt.Fprintf(out, "%14s %5d %4d %3d %12.2f %12.2f %+8.1f%%%s\n", r.Variant, r.N, r.L, max(r.Roots, 1), pt.Seconds*1e3, res.Seconds*1e3, e*100, mark)
	}
	fmt.Fprintf(out, "agree past N = %d: %d rows, largest error %.1f%%, %d MISSED\n", f.FitMaxN, n, worst*100, miss)
	return nil
}

// printGrades prints every row of f's error under f's costs, each a fit
// row or a validation one, and the misses, each named.
func printGrades(out io.Writer, f *bootsim.Fitted, excluded map[string]string) error {
	fmt.Fprintf(out, "%14s %5s %4s %3s %12s %12s %9s %s\n", "variant", "N", "L", "R", "measured ms", "sim ms", "error", "")
	worstVal, worstFit := 0.0, 0.0
	missVal, missFit, nVal := 0, 0, 0
	for _, r := range f.Rows {
		pt, err := pointOf(r)
		if err != nil {
			return err
		}
		p := f.Go
		if r.Lang == "c" {
			p = f.C
		}
		res, err := pt.Sim(p)
		if err != nil {
			return err
		}
		e := (res.Seconds - pt.Seconds) / pt.Seconds
		role := "fit"
		if r.N > f.FitMaxN || excluded[r.Variant] != "" {
			role = "validation"
			nVal++
			worstVal = max(worstVal, math.Abs(e))
		} else {
			worstFit = max(worstFit, math.Abs(e))
		}
		mark := ""
		ok, how := within(pt.Seconds, e)
		switch {
		case !ok && role == "validation":
			missVal++
			mark = fmt.Sprintf("  MISSED (%+.0f%%: %s)", e*100, missCause(pt, e))
		case !ok:
			missFit++
			mark = fmt.Sprintf("  MISSED in the fit (%+.0f%%: %s)", e*100, missCause(pt, e))
		default:
			mark = how
		}
		fmt.Fprintf(out, "%14s %5d %4d %3d %12.2f %12.2f %+8.1f%%  %s%s\n", r.Variant, r.N, r.L, max(r.Roots, 1), pt.Seconds*1e3, res.Seconds*1e3, e*100, role, mark)
	}
	fmt.Fprintf(out, "validation (N > %d): %d rows, largest error %.1f%%, %d MISSED (goal: every row within 25%%, or %.2f ms below a %.0f ms row); fit rows: largest error %.1f%%, %d MISSED\n",
		f.FitMaxN, nVal, worstVal*100, missVal, simTol*1e3, noiseFloor*1e3, worstFit*100, missFit)
	if nVal == 0 {
		fmt.Fprintln(out, "no row past the fit was measured: the simulator is NOT validated by this run")
	}
	return nil
}

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
