package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/bench/bootsim"
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
		if useWindow && r.AvailBoot > 0 {
			pt.Avail = r.AvailBoot // over the boot's window, in rows that have it
		}
		if useCrowd {
			pt.Runnable = r.RunnableBoot // 0 in rows measured before it was
		}
		if useWait {
			pt.RunWait = r.WaitBootUs / 1e6
		}
	}
	return pt, nil
}

// agreePointOf is the row's agree figure, at the share over its window.
func agreePointOf(r bootsim.MeasuredRow) (bootsim.Point, error) {
	pt, err := pointOf(r)
	if err != nil {
		return pt, err
	}
	pt.Seconds = r.AgreeMs / 1e3
	if useAvail && useWindow && r.AvailAgree > 0 {
		pt.Avail = r.AvailAgree
	}
	if useAvail && useCrowd {
		pt.Runnable = r.RunnableAgree
	}
	if useWait {
		pt.RunWait = r.WaitAgreeUs / 1e6
	}
	return pt, nil
}

// useWindow: rows that carry the share over their windows are judged on
// it (-window=false: on the share over the world's life, as before).
var useWindow = true

// useAvail: the fit and the grades take each row's measured share of the
// host (-avail=false: as if every row had the whole host, to show what the
// measured input buys).
var useAvail = true

// useCrowd: rows that carry the host's runnable tasks over their windows
// are judged with the run queue's term (-crowd): off by default since the
// worlds are held up after their reports, when the queue over a window is
// the world's own ranks, whose CPU the model already puts on the cores, so
// the term counted them twice (docs/benchmarks.md#the-run-queues-term-on-held-rows).
// Unheld, part of the queue was the exits of the ranks that had finished,
// which the term stood for; beside the bench's burners it is again foreign
// work, and -crowd=true takes it.
var useCrowd = false

// useWait: rows that carry the wait of a woken task for a CPU are judged
// with it on every sleeping hop (-wait=false: without it).
var useWait = true

func costs(p bootsim.Params) string {
	return fmt.Sprintf("on %d cores: fixed %.2f ms, root accept %.1f us and reply %.1f us per rank, ring hop %.1f us (+%.1f us per bidirectional step), wake-up %.1f us; CPU %.1f us per message (+%.1f us if its receiver slept, +%.1f us both ways round), %.1f us per rank start; star table %.3f us per record per rank; every cost %.3f%% more a runnable task on the host; a sleeping hop %.2f waits for a CPU",
		p.Cores, p.Fixed*1e3, p.Accept*1e6, p.Reply*1e6, p.Hop*1e6, p.BidiExtra*1e6, p.WakeFixed*1e6, p.Work*1e6, p.WakeWork*1e6, p.BidiWork*1e6, p.StartWork*1e6, p.Table*1e6, p.Crowd*100, p.WaitScale)
}

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
		fmt.Fprintf(out, "%14s %5d %4d %3d %12.2f %12.2f %+8.1f%%  %s%s\n", label(r), r.N, r.L, max(r.Roots, 1), pt.Seconds*1e3, res.Seconds*1e3, e*100, role, mark)
	}
	fmt.Fprintf(out, "validation (N > %d): %d rows, largest error %.1f%%, %d MISSED (goal: every row within 25%%, or %.2f ms below a %.0f ms row); fit rows: largest error %.1f%%, %d MISSED\n",
		f.FitMaxN, nVal, worstVal*100, missVal, simTol*1e3, noiseFloor*1e3, worstFit*100, missFit)
	if nVal == 0 {
		fmt.Fprintln(out, "no row past the fit was measured: the simulator is NOT validated by this run")
	}
	return nil
}
