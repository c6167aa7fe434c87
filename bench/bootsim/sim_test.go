package bootsim

import (
	"math"
	"math/rand"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/spec"
)

// The step counts the simulator uses are the spec's closed forms: flat
// BOOTSTRAP_RING_STEPS, hierarchical BOOTSTRAP_HIER_STEPS (even instances)
// and the sum of its phases (uneven), flat when BOOTSTRAP_HIER_DISPATCH says so.
func TestStepsMatchSpec(t *testing.T) {
	s, err := spec.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	one := func(row string, vars ...string) *gen.Formula {
		es, err := gen.Formulas(s, row, vars...)
		if err != nil || len(es) != 1 {
			t.Fatalf("%s: %v", row, err)
		}
		return es[0]
	}
	ev := func(f *gen.Formula, v map[string]int64) int {
		x, err := f.Eval(v)
		if err != nil {
			t.Fatal(err)
		}
		return int(x)
	}
	ringSteps := one("BOOTSTRAP_RING_STEPS", "n")
	hierSteps := one("BOOTSTRAP_HIER_STEPS", "n", "l")
	dispatch := one("BOOTSTRAP_HIER_DISPATCH", "n", "l")
	intra := one("BOOTSTRAP_HIER_INTRA_STEPS", "k")
	inter := one("BOOTSTRAP_HIER_INTER_STEPS", "n", "l")
	down := one("BOOTSTRAP_HIER_DOWN_HOPS", "k")
	for n := 1; n <= 300; n++ {
		if got := Steps(Star, n, 1); got != 0 {
			t.Fatalf("star of %d: %d ring steps", n, got)
		}
		if got, want := Steps(Flat, n, 1), ev(ringSteps, map[string]int64{"n": int64(n)}); got != want {
			t.Fatalf("flat of %d: %d steps, the spec %d", n, got, want)
		}
		for l := 1; l <= n+1; l++ {
			v := map[string]int64{"n": int64(n), "l": int64(l)}
			want := ev(ringSteps, v)
			if ev(dispatch, v) != 0 {
				k := map[string]int64{"k": int64(l)}
				want = ev(intra, k) + ev(inter, v) + ev(down, k)
				if n%l == 0 && ev(hierSteps, v) != want {
					t.Fatalf("n=%d l=%d: BOOTSTRAP_HIER_STEPS %d, the phases %d", n, l, ev(hierSteps, v), want)
				}
			}
			if got := Steps(Hier, n, l); got != want {
				t.Fatalf("hier n=%d l=%d: %d steps, the spec %d", n, l, got, want)
			}
		}
	}
}

// ring's closed form is the step-by-step recurrence's last rank: a rank
// sends step i once it is ready and holds step i-1's slice.
func TestRingClosedForm(t *testing.T) {
	rng := rand.New(rand.NewSource(27))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.Intn(40)
		ready := make([]float64, n)
		for i := range ready {
			ready[i] = rng.Float64()
		}
		c := rng.Float64() / 10
		recv := make([]float64, n) // the time rank r received the last step's slice
		for i := 0; i < n-1; i++ {
			next := make([]float64, n)
			for r := 0; r < n; r++ {
				p := (r - 1 + n) % n
				send := ready[p]
				if i > 0 {
					send = max(send, recv[p])
				}
				next[r] = send + c
			}
			recv = next
		}
		want := maxOf(ready)
		if n > 1 {
			want = maxOf(recv)
		}
		if got := ring(ready, n-1, c); math.Abs(got-want) > 1e-12 {
			t.Fatalf("n=%d: closed form %v, step by step %v", n, got, want)
		}
	}
}

func TestRoundsMatchRuntime(t *testing.T) {
	for n := 1; n <= 1000; n++ {
		if treeRounds(n) != collectives.TreeRounds(n) || cubeRounds(n) != collectives.CubeRounds(n) {
			t.Fatalf("n=%d: tree %d/%d, cube %d/%d", n, treeRounds(n), collectives.TreeRounds(n), cubeRounds(n), collectives.CubeRounds(n))
		}
	}
}

// The root: serial accepts; a burst past the backlog drops the excess
// once, and the retries arrive after the first retransmit delay.
func TestRootGather(t *testing.T) {
	p := Params{Accept: 0.001}
	if got, drops := rootGather(100, p, nil); math.Abs(got-0.1) > 1e-9 || drops != 0 {
		t.Errorf("100 accepts of 1 ms: %v s, %d drops", got, drops)
	}
	p.Backlog, p.Retry = 10, 1
	got, drops := rootGather(100, p, nil)
	// 89 dropped at once; their retries arrive together and burst again
	if drops < 100-1-10 {
		t.Errorf("a burst of 100 at a backlog of 10: %d drops, want at least 89", drops)
	}
	if got < 1 {
		t.Errorf("the dropped connects were accepted at %v s, before their 1 s retry", got)
	}
	p.Stagger = 1000 // one connect a millisecond: the root keeps up, nothing dropped
	if _, drops := rootGather(100, p, nil); drops != 0 {
		t.Errorf("staggered at the accept rate: %d drops", drops)
	}
	if got, _ := rootGather(1000, Params{Skew: 2, Accept: 1e-6}, nil); math.Abs(got-(2+1e-6)) > 1e-9 {
		t.Errorf("a 2 s start skew: the last accept at %v s", got)
	}
}

func TestSimulateShapes(t *testing.T) {
	p := Params{Accept: 1e-4, Hop: 1e-3, Gathers: 2}
	star, _ := Simulate(Star, 64, 0, p)
	flat, _ := Simulate(Flat, 64, 0, p)
	hier, _ := Simulate(Hier, 64, 8, p)
	if !(star.Seconds < hier.Seconds && hier.Seconds < flat.Seconds) {
		t.Errorf("64 ranks: star %v, hier %v, flat %v: want star < hier < flat", star.Seconds, hier.Seconds, flat.Seconds)
	}
	// flat: 64 accepts, the reply of the last rank, a hop, 2 x 63 steps
	want := 64*1e-4 + 1e-3 + 2*63*1e-3
	if math.Abs(flat.Seconds-want) > 1e-12 || flat.Steps != 63 {
		t.Errorf("flat of 64: %v s in %d steps, want %v in 63", flat.Seconds, flat.Steps, want)
	}
	// nrtabi's final round: the root reads 64 RING_DONEs, then COMPLETE
	p.Final = true
	if f, _ := Simulate(Flat, 64, 0, p); math.Abs(f.Seconds-(want+64*1e-4+1e-3)) > 1e-12 {
		t.Errorf("flat of 64 with the final round: %v s, want %v", f.Seconds, want+64*1e-4+1e-3)
	}
	if s, _ := Simulate(Star, 64, 0, p); s != star {
		t.Errorf("the star has no final round: %+v, was %+v", s, star)
	}
	// 4 roots of 16 ranks each: each gathers 16 (1.6 ms); the cluster id
	// goes round the roots' ring, a hop each (1 ms): root 3 has it at 3.6
	// ms, root 0 back at 4.6 ms, and answers then; then the rings as before
	// and the final round of a root's 16
	p.Roots = 4
	r4, _ := Simulate(Flat, 64, 0, p)
	if w := 4.6e-3 + 1e-3 + 2*63*1e-3 + 16*1e-4 + 1e-3; math.Abs(r4.Seconds-w) > 1e-12 {
		t.Errorf("flat of 64 over 4 roots: %v s, want %v", r4.Seconds, w)
	}
	p.Roots, p.Final = 0, false
	// a world no larger than an instance is flat (BOOTSTRAP_HIER_DISPATCH)
	if h, _ := Simulate(Hier, 8, 8, p); math.Abs(h.Seconds-(8*1e-4+1e-3+2*7*1e-3)) > 1e-12 || h.Steps != 7 {
		t.Errorf("hier 8 of 8: %+v, want the flat ring", h)
	}
	a, _ := Simulate(Hier, 100000, 316, Params{Accept: 1e-5, Hop: 1e-4, Gathers: 2, Backlog: 16384, Retry: 1})
	b, _ := Simulate(Hier, 100000, 316, Params{Accept: 1e-5, Hop: 1e-4, Gathers: 2, Backlog: 16384, Retry: 1})
	if a != b || a.Drops == 0 {
		t.Errorf("100k ranks in a burst: %+v then %+v: want the same, with drops", a, b)
	}
	for _, n := range []int{0, -1, maxRanks + 1} {
		if _, err := Simulate(Flat, n, 0, p); err == nil {
			t.Errorf("%d ranks: no error", n)
		}
	}
	if _, err := Simulate(Flat, 10, 0, Params{Backlog: 4}); err == nil {
		t.Error("a backlog without a retry delay: no error")
	}
}

// Fit recovers the costs it was given from exact points, and a point held
// out is then predicted exactly.
func TestFitRecovers(t *testing.T) {
	truth := Params{Fixed: 0.004, Accept: 3e-4, Hop: 2e-4, HopPerActive: 1e-5, Gathers: 2, PerNC: true}
	var pts []Point
	for _, n := range []int{8, 16, 32, 64, 128, 256} {
		for _, a := range []Algo{Star, Flat} {
			r, err := Simulate(a, n, 0, truth)
			if err != nil {
				t.Fatal(err)
			}
			pts = append(pts, Point{Algo: a, N: n, Seconds: r.Seconds})
		}
	}
	got, err := Fit(Params{Gathers: 2, PerNC: true}, pts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fitted {
		if math.Abs(f.get(got)-f.get(truth)) > 1e-9 {
			t.Errorf("%s: fitted %v, truth %v", f.name, f.get(got), f.get(truth))
		}
	}
	r, _ := Simulate(Hier, 256, 16, truth)
	if e, _ := RelErr(got, Point{Algo: Hier, N: 256, L: 16, Seconds: r.Seconds}); math.Abs(e) > 1e-6 {
		t.Errorf("held-out hier point: %v relative error", e)
	}
	if _, err := Fit(Params{Backlog: 5}, pts); err == nil {
		t.Error("a fit with a backlog: no error")
	}
	if _, err := Fit(Params{}, pts[:2]); err == nil {
		t.Error("two points, four costs: no error")
	}
}

func BenchmarkSimulate100k(b *testing.B) {
	p := Params{Accept: 1e-5, Hop: 1e-4, Gathers: 2, PerNC: true, Backlog: 16384, Retry: 1}
	for _, a := range []Algo{Star, Flat, Hier} {
		b.Run(a.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Simulate(a, 100000, 316, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The events the simulator runs take as many sequential hops as Steps
// says: with one unit hop and nothing else, a world agrees after the reply's
// hop and Steps hops (hierarchical: the longest instance's three phases).
func TestSimulatedHopsAreSteps(t *testing.T) {
	p := Params{Hop: 1, Gathers: 1}
	for n := 1; n <= 64; n++ {
		for l := 1; l <= n; l++ {
			for _, a := range []Algo{Flat, Hier} {
				r, err := Simulate(a, n, l, p)
				if err != nil {
					t.Fatal(err)
				}
				if want := float64(1 + Steps(a, n, l)); r.Seconds != want {
					t.Fatalf("%v n=%d l=%d: %v hops, Steps says %v", a, n, l, r.Seconds, want)
				}
			}
		}
	}
}

// The staggers the simulator applies are the spec's (docs/bootstrap-
// hierarchy.md#stagger), and the rule is the runtime's: flat rank ms past
// 128, hierarchical rank/7000 s past 256, the star none.
func TestConnectDelayMatchesSpec(t *testing.T) {
	s, err := spec.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{
		"BOOTSTRAP_DELAY_CONNECT_RANKS":    delayConnectRanks,
		"BOOTSTRAP_HIER_STAGGER_THRESHOLD": hierStaggerAbove,
		"BOOTSTRAP_HIER_STAGGER_RATE":      hierStaggerRate,
	} {
		c := s.ConstantByName(name)
		if c == nil {
			t.Fatalf("the spec has no %s", name)
		}
		if v, ok := c.Int(); !ok || v != want {
			t.Errorf("%s: the spec %v, bootsim %d", name, c.Value, want)
		}
	}
	for _, c := range []struct {
		a       Algo
		n, l, r int
		want    float64
	}{
		{Star, 1000, 0, 999, 0},
		{Flat, 128, 0, 127, 0},
		{Flat, 129, 0, 100, 0.1},
		{Hier, 256, 16, 255, 0},
		{Hier, 257, 16, 70, 0.01},
		{Hier, 200, 256, 100, 0.1}, // n <= l: flat by the dispatch
	} {
		if got := ConnectDelay(c.a, c.n, c.l, c.r); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ConnectDelay(%v, n %d, l %d, rank %d) = %v, want %v", c.a, c.n, c.l, c.r, got, c.want)
		}
	}
	// The flat world of 256 waits for its last rank's quarter second.
	p := Params{Accept: 1e-6, RankDelay: true}
	r, _ := Simulate(Flat, 256, 0, p)
	if r.Gathered < 0.255 {
		t.Errorf("flat 256 with its connect delay: the root had every record at %v s, before rank 255 connected at 0.255 s", r.Gathered)
	}
}

// The fit recovers planted costs through the connect delays' kinks: the
// flat rows past 128 ranks, whose root is bound by the stagger (an accept
// under 1 ms) or by its accepts (over 1 ms: a piece the first
// linearisation, at zero cost, is not on), and the hierarchical ones held
// out.
func TestFitRecoversWithRankDelay(t *testing.T) {
	for _, accept := range []float64{3.5e-4, 1.5e-3} {
		fitRecoversWithRankDelay(t, accept)
	}
}

func fitRecoversWithRankDelay(t *testing.T, accept float64) {
	truth := Params{Fixed: 0.002, Accept: accept, Hop: 1e-5, HopPerActive: 6e-6, Gathers: 2, RankDelay: true}
	var pts []Point
	for _, n := range []int{8, 16, 32, 64, 128, 256, 512} {
		for _, a := range []Algo{Star, Flat} {
			r, err := Simulate(a, n, 0, truth)
			if err != nil {
				t.Fatal(err)
			}
			pts = append(pts, Point{Algo: a, N: n, Seconds: r.Seconds})
		}
	}
	got, err := Fit(Params{Gathers: 2, RankDelay: true}, pts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fitted {
		if math.Abs(f.get(got)-f.get(truth)) > 1e-8 {
			t.Errorf("accept %v: %s: fitted %v, truth %v", accept, f.name, f.get(got), f.get(truth))
		}
	}
	for _, n := range []int{64, 256, 1024} {
		r, _ := Simulate(Hier, n, 16, truth)
		if e, _ := RelErr(got, Point{Algo: Hier, N: n, L: 16, Seconds: r.Seconds}); math.Abs(e) > 1e-6 {
			t.Errorf("held-out hier point of %d: %v relative error", n, e)
		}
	}
	if accept >= 1e-3 {
		return // the root's accepts hide the stagger
	}
	// Without the delay in the model the same points are not recovered:
	// the stagger is what the flat rows past 128 spend.
	blind, err := Fit(Params{Gathers: 2}, pts)
	if err == nil && math.Abs(blind.Accept-truth.Accept) < 1e-8 && math.Abs(blind.HopPerActive-truth.HopPerActive) < 1e-10 {
		t.Error("a fit blind to the connect delay recovered the costs: the delay changes nothing")
	}
}

// On one host every hierarchical hop is charged all N ranks busy (the
// instances' phases overlap): a world of 64 in instances of 8 takes the
// reply's hop and 21 steps of 64 busy ranks each, not 7 of 64 and 14 of 8.
func TestHierHopsChargeEveryRank(t *testing.T) {
	const c = 1e-6
	r, err := Simulate(Hier, 64, 8, Params{HopPerActive: c, Gathers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := c + float64(Steps(Hier, 64, 8))*64*c; math.Abs(r.Seconds-want) > 1e-12 {
		t.Errorf("hier 64/8: %v s, want %v", r.Seconds, want)
	}
}

// TestFitRecoversTable plants the star root's per-record table cost
// (N*N per world) and sees the fit recover it; fitted without that term,
// the same points leave the large star rows outside the 25 % goal, which
// is the miss the term was added for (docs/benchmarks.md).
func TestFitRecoversTable(t *testing.T) {
	truth := Params{Fixed: 0.004, Accept: 3e-4, Hop: 2e-4, HopPerActive: 1e-5, Table: 2e-6, Gathers: 2}
	var pts []Point
	for _, n := range []int{8, 16, 32, 64, 128, 256} {
		for _, a := range []Algo{Star, Flat} {
			r, err := Simulate(a, n, 0, truth)
			if err != nil {
				t.Fatal(err)
			}
			pts = append(pts, Point{Algo: a, N: n, Seconds: r.Seconds})
		}
	}
	got, err := Fit(Params{Gathers: 2}, pts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fitted {
		if math.Abs(f.get(got)-f.get(truth)) > 1e-9 {
			t.Errorf("%s: fitted %v, truth %v", f.name, f.get(got), f.get(truth))
		}
	}
	blind, err := fitCosts(Params{Gathers: 2}, pts, []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, pt := range pts {
		if pt.Algo != Star {
			continue
		}
		e, err := RelErr(blind, pt)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, math.Abs(e))
	}
	if worst <= 0.25 {
		t.Errorf("fitted without the table term, the star rows are all within 25 %% (worst %.1f%%): the planted N*N cost is not what the term catches", worst*100)
	}
	// the table is the star's alone: the ring shapes do not pay it
	for _, a := range []Algo{Flat, Hier} {
		with, _ := Simulate(a, 64, 8, truth)
		without := truth
		without.Table = 0
		r, _ := Simulate(a, 64, 8, without)
		if with.Seconds != r.Seconds {
			t.Errorf("%v pays the star's table cost: %v vs %v", a, with.Seconds, r.Seconds)
		}
	}
}
