package main

import (
	"fmt"
	"io"
	"math"

	"github.com/nrtabi/nrtabi/bench/bootsim"
)

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
			pt, err := agreePointOf(r)
			if err != nil {
				return err
			}
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
		pt, err := agreePointOf(r)
		if err != nil {
			return err
		}
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
		fmt.Fprintf(out, "%14s %5d %4d %3d %12.2f %12.2f %+8.1f%%%s\n", label(r), r.N, r.L, max(r.Roots, 1), pt.Seconds*1e3, res.Seconds*1e3, e*100, mark)
	}
	fmt.Fprintf(out, "agree past N = %d: %d rows, largest error %.1f%%, %d MISSED\n", f.FitMaxN, n, worst*100, miss)
	return nil
}
