package bootsim

import (
	"errors"
	"fmt"
	"math"
)

// Point is one measured median: a world of N ranks (L per instance for
// Hier) reaching agreement in Seconds.
type Point struct {
	Algo    Algo
	N, L    int
	Bidi    bool // every ring both ways round
	Roots   int  // roots (0 or 1: one)
	Seconds float64
	Avail   float64 // the share of the host the rest of it left the run, measured (0: not measured, taken as 1)
	// Runnable is the host's runnable tasks over the run, measured (0: not measured)
	Runnable float64
	// RunWait is the mean wait of a woken task for a CPU over the run, s, measured (0: not measured)
	RunWait float64
}

// Sim is the prediction of the point's world under p (its ring mode and
// roots in place of p's).
func (pt Point) Sim(p Params) (Result, error) {
	p.Bidi, p.Roots, p.Avail, p.Runnable, p.RunWait = pt.Bidi, pt.Roots, pt.Avail, pt.Runnable, pt.RunWait
	return Simulate(pt.Algo, pt.N, pt.L, p)
}

// fitted are the costs Fit estimates; the rest of Params is given.
var fitted = []struct {
	name string
	set  func(*Params, float64)
	get  func(Params) float64
}{
	{"fixed", func(p *Params, v float64) { p.Fixed = v }, func(p Params) float64 { return p.Fixed }},
	{"accept", func(p *Params, v float64) { p.Accept = v }, func(p Params) float64 { return p.Accept }},
	{"hop", func(p *Params, v float64) { p.Hop = v }, func(p Params) float64 { return p.Hop }},
	{"hop_per_active", func(p *Params, v float64) { p.HopPerActive = v }, func(p Params) float64 { return p.HopPerActive }},
	// The star root's per-record table cost is N*N per world, so the star
	// rows of several sizes tell it from Accept (N per world). Its
	// per-message part is not fitted apart: one reply per rank at the root
	// is once per rank, exactly as Accept, and the two are collinear on
	// every row (docs/benchmarks.md#hierarchical-bootstrap).
	{"table", func(p *Params, v float64) { p.Table = v }, func(p Params) float64 { return p.Table }},
	// The wake-up of a rank asleep since its own ring ended (the leaders'
	// ring, the blocks going down, the roots' ring), per busy rank: only
	// the hierarchical and multi-root rows pay it, so a fit on the star
	// and flat rows alone cannot see it and pins it to 0.
	{"wake", func(p *Params, v float64) { p.Wake = v }, func(p Params) float64 { return p.Wake }},
}

// cpuFitted are the costs Fit estimates when the host's shape is given
// (base.Cores > 0): the latency of a hop and of a bidirectional step, the
// CPU a message and a rank's start queue on the cores, the root's accept
// and the star's table, the fixed part. The per-busy-rank terms of the
// latency-shaped model (HopPerActive, Wake) are what the cores now carry:
// pinned to 0.
//
// The star's root is charged Reply per rank, not Table per record: its
// table is 28 bytes a rank (14 KB a reply at 512 ranks, microseconds to
// copy), and its rows grow linearly on this host (86, 176, 366 ms at 128,
// 256, 512 in the run of 2026-12-02 20:01): what a reply costs is the
// root's send and the woken rank's read and exit on the shared cores, once
// per rank (docs/benchmarks.md#the-simulator). Reply and Accept are not
// collinear here: the accepts hide under the ranks' start CPU, the replies
// follow the gather.
// lateFitted are the CPU model's terms fitted in the second stage only.
var lateFitted = []string{"bidi_work", "crowd", "wait_scale"}

var cpuFitted = []string{"fixed", "accept", "reply", "hop", "work", "start_work", "bidi_extra", "bidi_work", "wake_fixed", "crowd", "wait_scale"}

func init() {
	fitted = append(fitted, []struct {
		name string
		set  func(*Params, float64)
		get  func(Params) float64
	}{
		{"work", func(p *Params, v float64) { p.Work = v }, func(p Params) float64 { return p.Work }},
		{"start_work", func(p *Params, v float64) { p.StartWork = v }, func(p Params) float64 { return p.StartWork }},
		{"bidi_extra", func(p *Params, v float64) { p.BidiExtra = v }, func(p Params) float64 { return p.BidiExtra }},
		{"wake_fixed", func(p *Params, v float64) { p.WakeFixed = v }, func(p Params) float64 { return p.WakeFixed }},
		{"reply", func(p *Params, v float64) { p.Reply = v }, func(p Params) float64 { return p.Reply }},
		{"bidi_work", func(p *Params, v float64) { p.BidiWork = v }, func(p Params) float64 { return p.BidiWork }},
		{"wake_work", func(p *Params, v float64) { p.WakeWork = v }, func(p Params) float64 { return p.WakeWork }},
		{"crowd", func(p *Params, v float64) { p.Crowd = v }, func(p Params) float64 { return p.Crowd }},
		{"wait_scale", func(p *Params, v float64) { p.WaitScale = v }, func(p Params) float64 { return p.WaitScale }},
	}...)
}

// Fit estimates Fixed, Accept, Hop, HopPerActive, Table and Wake from the points (the rest
// of base is kept) by least squares on the relative error. With no backlog,
// stagger or skew a prediction is linear in those costs except where
// the ranks' own connect delays (RankDelay) meet the root's accepts: the
// root's gather ends at max over r of (arrival r + (n - r) Accept), linear
// in pieces. So the fit is Gauss-Newton: each round linearises every
// prediction at the current costs (a cost's regressor is the prediction's
// slope in it, exact within a piece) and solves the linear problem; with
// no RankDelay the first round is exact. A cost the fit makes negative is
// pinned to 0 and the rest refitted; so is a cost no point's prediction
// depends on (the star's table on rows with no star; the wake-up on rows
// with no hierarchy). Fit uses only the points it is given:
// the caller holds out the ones it validates against.
func Fit(base Params, pts []Point) (Params, error) {
	var use []int
	for k, f := range fitted {
		if base.Cores > 0 && !contains(cpuNames(), f.name) {
			continue
		}
		if base.WakeWork > 0 && f.name == "work" {
			// the wake-up's and a queued message's CPU were measured
			// (the rows' rusage split into per rank, per switch and per
			// message, docs/benchmarks.md#the-simulator): kept as given
			continue
		}
		if base.Cores <= 0 && k >= latencyFitted {
			continue
		}
		use = append(use, k)
	}
	if base.Cores > 0 {
		// In two stages: first without the terms only some rows can tell
		// apart (lateFitted), then every term from there, those starting at
		// 0. A bidirectional message's extra CPU and a one-way message's CPU
		// trade against each other on rows of N <= 64 where the one-way
		// rings are bound by their path: started together, the search can
		// put all of the CPU on the extra and leave the one-way rings of 512
		// with none (TestFitCPUValidates). Staged, an extra moves only where
		// the plain cost cannot explain the rows.
		var early []int
		for _, k := range use {
			if !contains(lateFitted, fitted[k].name) {
				early = append(early, k)
			}
		}
		p, err := fitSearch(base, pts, early, nil)
		if err != nil {
			return Params{}, err
		}
		return fitSearch(p, pts, use, early)
	}
	return fitCosts(base, pts, use)
}

// fitSearch is the fit of the CPU-shaped model: each phase's end is the
// larger of its path and its CPU over the cores, so a cost's slope is 0
// wherever the other bound binds and Gauss-Newton from 0 would never see
// the work. A pattern search on the summed squared relative error, each
// cost scaled up and down by a factor that shrinks from 4 to 1.001 (and
// tried at 0), is blind to that: it only compares errors. Bounded: at most
// 400 sweeps.
func fitSearch(base Params, pts []Point, use []int, started []int) (Params, error) {
	if len(pts) < len(use) {
		return Params{}, fmt.Errorf("bootsim: %d points cannot fit %d costs", len(pts), len(use))
	}
	for _, pt := range pts {
		if pt.Seconds <= 0 {
			return Params{}, fmt.Errorf("bootsim: a measured %v point of %d ranks took %v s", pt.Algo, pt.N, pt.Seconds)
		}
	}
	loss := func(p Params) (float64, error) {
		var s float64
		for _, pt := range pts {
			e, err := RelErr(p, pt)
			if err != nil {
				return 0, err
			}
			// |log(predicted/measured)|: a loaded host's noise is a
			// factor (one world of 64 took 95 ms on an idle host and
			// 364 ms at load 94, docs/benchmarks.md#the-simulator), and
			// the absolute log keeps one such row from pulling every cost
			s += math.Abs(math.Log1p(max(e, -1+1e-12)))
		}
		return s, nil
	}
	cur := base
	for _, k := range use {
		switch {
		case contains(started, k): // a cost an earlier stage fitted starts there
		case started != nil:
			fitted[k].set(&cur, 0) // a late term starts at 0: it moves only if the rows need it
		default:
			fitted[k].set(&cur, 1e-4) // a start every cost can move from
		}
	}
	best, err := loss(cur)
	if err != nil {
		return Params{}, err
	}
	// A cost at 0 is tried again at every decade of a host's costs (1 us
	// .. 10 ms), not only just above 0: from 0 a factor of f a sweep
	// would take dozens of sweeps to reach a hop of 300 us, and the search
	// would stop at the first shrink of f with the cost still pinned. The
	// search runs twice, the second from the first's costs with f back at
	// 4, so a cost the first left at 0 gets its chance once the others
	// have settled. Bounded: 2 x at most 400 sweeps.
	for pass := 0; pass < 2; pass++ {
		for f, sweeps := 4.0, 0; f > 1.001 && sweeps < 400; sweeps++ {
			moved := false
			for _, k := range use {
				v := fitted[k].get(cur)
				tries := []float64{v * f, v / f, 0, max(v, 1e-7) * f}
				if v == 0 {
					tries = append(tries, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
				}
				for _, try := range tries {
					p := cur
					fitted[k].set(&p, try)
					l, err := loss(p)
					if err != nil {
						return Params{}, err
					}
					// a cost no row's error depends on goes to 0 (a tie at
					// 0 is taken), as the linear fit pins one
					if l < best*(1-1e-12) || try == 0 && v != 0 && l <= best*(1+1e-12) {
						best, cur, moved = l, p, true
						v = try
					}
				}
			}
			if !moved {
				f = math.Sqrt(f)
			}
		}
	}
	return cur, nil
}

// fitCosts is Fit over the fitted costs whose indices are in use; the
// others are pinned to 0 (a test fits without a term to see what it buys).
func fitCosts(base Params, pts []Point, use []int) (Params, error) {
	if base.Backlog != 0 || base.Stagger != 0 || base.Skew != 0 {
		return Params{}, errors.New("bootsim: fit with no backlog, stagger or skew (the prediction is then linear in the costs, in pieces)")
	}
	cur := base
	for _, k := range use {
		fitted[k].set(&cur, 0)
	}
	const rounds = 50
	for round := 0; round < rounds; round++ {
		next, err := fitRound(cur, pts, use)
		if err != nil {
			return Params{}, err
		}
		same := true
		for _, f := range fitted {
			a, b := f.get(cur), f.get(next)
			if math.Abs(a-b) > 1e-9*max(math.Abs(a), math.Abs(b), 1e-9) {
				same = false
			}
		}
		cur = next
		if same {
			break
		}
	}
	return cur, nil
}

// fitRound is one Gauss-Newton round about cur: the fitted costs that
// minimise the linearised relative error, each >= 0.
func fitRound(cur Params, pts []Point, use []int) (Params, error) {
	var free []int
	for _, k := range use {
		seen := false
		for _, pt := range pts {
			sl, err := slopeOf(pt, cur, k)
			if err != nil {
				return Params{}, err
			}
			seen = seen || sl != 0
		}
		if seen {
			free = append(free, k)
		}
	}
	for len(free) > 0 {
		if len(pts) < len(free) {
			return Params{}, fmt.Errorf("bootsim: %d points cannot fit %d costs", len(pts), len(free))
		}
		x := make([][]float64, len(pts))
		y := make([]float64, len(pts))
		for i, pt := range pts {
			if pt.Seconds <= 0 {
				return Params{}, fmt.Errorf("bootsim: a measured %v point of %d ranks took %v s", pt.Algo, pt.N, pt.Seconds)
			}
			r0, err := pt.Sim(cur)
			if err != nil {
				return Params{}, err
			}
			// prediction ~ r0 + sum_k slope_k (theta_k - cur_k)
			lin := r0.Seconds
			var slopes []float64
			for _, k := range free {
				slope, err := slopeOf(pt, cur, k)
				if err != nil {
					return Params{}, err
				}
				lin -= slope * fitted[k].get(cur)
				slopes = append(slopes, slope)
			}
			// costs outside free are pinned to 0 in this solve
			for _, k := range use {
				if !contains(free, k) {
					slope, err := slopeOf(pt, cur, k)
					if err != nil {
						return Params{}, err
					}
					lin -= slope * fitted[k].get(cur)
				}
			}
			y[i] = (pt.Seconds - lin) / pt.Seconds
			for _, sl := range slopes {
				x[i] = append(x[i], sl/pt.Seconds)
			}
		}
		theta, err := leastSquares(x, y)
		if err != nil {
			return Params{}, err
		}
		neg := -1
		for j, v := range theta {
			if v < 0 && (neg < 0 || v < theta[neg]) {
				neg = j
			}
		}
		if neg < 0 {
			out := cur
			for j, k := range free {
				fitted[k].set(&out, theta[j])
			}
			for _, k := range use {
				if !contains(free, k) {
					fitted[k].set(&out, 0)
				}
			}
			return out, nil
		}
		free = append(free[:neg:neg], free[neg+1:]...)
	}
	return Params{}, errors.New("bootsim: no non-negative fit")
}

// slopeStep is the finite difference a slope is taken over (1 us: far
// below any cost, far above rounding at these magnitudes).
const slopeStep = 1e-6

// slopeOf is d prediction / d cost k at p, taken forward (the piece the
// cost grows into).
func slopeOf(pt Point, p Params, k int) (float64, error) {
	r0, err := pt.Sim(p)
	if err != nil {
		return 0, err
	}
	pk := p
	fitted[k].set(&pk, fitted[k].get(p)+slopeStep)
	r1, err := pt.Sim(pk)
	if err != nil {
		return 0, err
	}
	return (r1.Seconds - r0.Seconds) / slopeStep, nil
}

// latencyFitted is how many of fitted the latency-shaped model (no Cores)
// estimates: the ones before init appends the CPU model's.
const latencyFitted = 6

func cpuNames() []string { return cpuFitted }

func contains[T comparable](v []T, x T) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

// leastSquares solves min |x theta - y| through the normal equations
// (a handful of unknowns).
func leastSquares(x [][]float64, y []float64) ([]float64, error) {
	m := len(x[0])
	a := make([][]float64, m)
	for i := range a {
		a[i] = make([]float64, m+1)
	}
	for r := range x {
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				a[i][j] += x[r][i] * x[r][j]
			}
			a[i][m] += x[r][i] * y[r]
		}
	}
	for c := 0; c < m; c++ {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-300 {
			return nil, errors.New("bootsim: the points do not determine every cost (too few distinct world sizes)")
		}
		a[c], a[p] = a[p], a[c]
		for r := 0; r < m; r++ {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= m; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	out := make([]float64, m)
	for i := range out {
		out[i] = a[i][m] / a[i][i]
	}
	return out, nil
}

// RelErr is (predicted - measured) / measured of one point under p.
func RelErr(p Params, pt Point) (float64, error) {
	r, err := pt.Sim(p)
	if err != nil {
		return 0, err
	}
	return (r.Seconds - pt.Seconds) / pt.Seconds, nil
}

// RelLeastSquares solves min sum ((x_i theta - y_i) / y_i)^2: a least-
// squares split of measured totals y into per-unit costs, each row's
// error relative (bench/bootscale splits a world's CPU this way).
func RelLeastSquares(x [][]float64, y []float64) ([]float64, error) {
	if len(x) == 0 || len(x) != len(y) || len(x) < len(x[0]) {
		return nil, fmt.Errorf("bootsim: %d rows cannot split into %d costs", len(x), len(x[0]))
	}
	xs := make([][]float64, len(x))
	ones := make([]float64, len(x))
	for i := range x {
		if y[i] <= 0 || len(x[i]) != len(x[0]) {
			return nil, fmt.Errorf("bootsim: row %d: a total of %v", i, y[i])
		}
		for _, v := range x[i] {
			xs[i] = append(xs[i], v/y[i])
		}
		ones[i] = 1
	}
	return leastSquares(xs, ones)
}
