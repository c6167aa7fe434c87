package bootsim

import (
	"math"
	"math/rand"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// The bidirectional ring's closed form is a step-by-step run's: at step i
// rank r sends slice r-i forward and r+i backward once it holds them and
// is ready, each message costing c; the last rank holds every slice at
// max(ready) + ceil((k-1)/2) c, and every rank holds every slice exactly
// once (the two streams partition the ring, as model/bidi.pml checks).
func TestBidiRingStepByStep(t *testing.T) {
	rng := rand.New(rand.NewSource(37))
	for trial := 0; trial < 300; trial++ {
		k := 1 + rng.Intn(40)
		ready := make([]float64, k)
		for i := range ready {
			ready[i] = rng.Float64()
		}
		c := rng.Float64() / 10
		f, b := k/2, (k-1)/2
		if f+b != k-1 && k > 1 {
			t.Fatalf("k=%d: %d + %d steps do not carry k-1 records", k, f, b)
		}
		held := make([]map[int]bool, k)
		at := make([]float64, k) // when rank r finished its last step
		for r := range held {
			held[r] = map[int]bool{r: true}
			at[r] = ready[r]
		}
		for i := 0; i < f; i++ {
			next := make([]float64, k)
			for r := 0; r < k; r++ {
				p, s := (r-1+k)%k, (r+1)%k
				// from the predecessor: slice p-i (it holds it: its own or
				// what it got at step i-1); from the successor: s+i
				got := []int{((p-i)%k + k) % k}
				tm := at[p] + c
				if i < b {
					got = append(got, (s+i)%k)
					tm = math.Max(tm, at[s]+c)
				}
				for _, x := range got {
					if held[r][x] {
						t.Fatalf("k=%d step %d: rank %d got slice %d twice", k, i, r, x)
					}
				}
				next[r] = math.Max(at[r], tm)
				for _, x := range got {
					held[r][x] = true
				}
			}
			at = next
		}
		last := maxOf(at)
		for r := range held {
			if len(held[r]) != k {
				t.Fatalf("k=%d: rank %d holds %d slices", k, r, len(held[r]))
			}
		}
		if want := ring(ready, ringSteps(k, true), c); math.Abs(last-want) > 1e-9 {
			t.Fatalf("k=%d: step by step %v, closed form %v", k, last, want)
		}
	}
}

// StepsOf's bidirectional counts are the wire's: ceil((N-1)/2) flat,
// ceil((L-1)/2) + ceil((H-1)/2) + ceil((L-1)/2) hierarchical, and the
// simulator takes that many hops with a unit hop and nothing else.
func TestBidiSteps(t *testing.T) {
	ceilHalf := func(k int) int { return (k - 1 + 1) / 2 }
	for n := 1; n <= 64; n++ {
		if got := StepsOf(Flat, n, 0, true); got != ceilHalf(n) {
			t.Fatalf("flat bidi of %d: %d steps", n, got)
		}
		for l := 1; l <= n; l++ {
			want := ceilHalf(n)
			if n > l {
				h := (n + l - 1) / l
				want = ceilHalf(l) + ceilHalf(h) + ceilHalf(l)
			}
			if got := StepsOf(Hier, n, l, true); got != want {
				t.Fatalf("hier bidi n=%d l=%d: %d steps, want %d", n, l, got, want)
			}
			r, err := Simulate(Hier, n, l, Params{Hop: 1, Gathers: 1, Bidi: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Seconds != float64(1+want) {
				t.Fatalf("hier bidi n=%d l=%d: %v hops, want %d", n, l, r.Seconds, 1+want)
			}
		}
	}
}

// The roots' rule and split are the runtime's (tcp.RootsFor, RootRange).
func TestRootsMatchRuntime(t *testing.T) {
	if RanksPerRoot != tcp.RanksPerRoot {
		t.Fatalf("ranks per root %d, the runtime's %d", RanksPerRoot, tcp.RanksPerRoot)
	}
	for _, n := range []int{1, 2, 7, 127, 128, 129, 300, 1000, 4097, 100000} {
		for _, l := range []int{0, 1, 3, 16, 317} {
			a := Flat
			if l > 0 {
				a = Hier
			}
			if got, want := RootsFor(a, n, l), tcp.RootsFor(n, l); got != want {
				t.Fatalf("n=%d l=%d: %d roots, the runtime %d", n, l, got, want)
			}
			r := RootsFor(a, n, l)
			for i := 0; i < r; i++ {
				lo, hi := rootRange(a, i, r, n, l)
				wlo, whi := tcp.RootRange(i, r, n, l, true)
				if lo != wlo || hi != whi {
					t.Fatalf("n=%d l=%d root %d of %d: [%d,%d), the runtime [%d,%d)", n, l, i, r, lo, hi, wlo, whi)
				}
			}
		}
	}
}

// The wake-up is paid by the hops whose receiver slept (hier inter and
// down, the roots' ring), not by the flat ring or the intra rings.
func TestWakeOnlyWhereRanksSleep(t *testing.T) {
	p := Params{Hop: 1e-4, Gathers: 1}
	w := p
	w.Wake = 1e-6
	for _, a := range []Algo{Star, Flat} {
		x, _ := Simulate(a, 64, 8, p)
		y, _ := Simulate(a, 64, 8, w)
		if x.Seconds != y.Seconds {
			t.Errorf("%v pays the wake-up: %v vs %v", a, x.Seconds, y.Seconds)
		}
	}
	x, _ := Simulate(Hier, 64, 8, p)
	y, _ := Simulate(Hier, 64, 8, w)
	// 7 inter steps and 7 down hops, each waking a rank behind 64 busy ones
	if d := y.Seconds - x.Seconds; math.Abs(d-14*64*1e-6) > 1e-12 {
		t.Errorf("hier 64/8: the wake-up adds %v s, want %v", d, 14*64*1e-6)
	}
	w.Roots, p.Roots = 4, 4
	x, _ = Simulate(Flat, 64, 0, p)
	y, _ = Simulate(Flat, 64, 0, w)
	if y.Seconds <= x.Seconds {
		t.Errorf("the roots' ring pays no wake-up: %v vs %v", y.Seconds, x.Seconds)
	}
}

// Fit recovers a planted wake-up from hierarchical rows, and a fit on
// star and flat rows alone pins it to 0 instead of failing.
func TestFitRecoversWake(t *testing.T) {
	truth := Params{Fixed: 0.002, Accept: 2e-4, Hop: 1.5e-4, HopPerActive: 3e-6, Table: 1e-6, Wake: 8e-6, Gathers: 2}
	var pts, noHier []Point
	for _, n := range []int{8, 16, 32, 64} {
		for _, pt := range []Point{{Algo: Star, N: n}, {Algo: Flat, N: n}, {Algo: Hier, N: n, L: int(math.Ceil(math.Sqrt(float64(n))))}, {Algo: Hier, N: n, L: 4, Bidi: true}} {
			r, err := pt.Sim(truth)
			if err != nil {
				t.Fatal(err)
			}
			pt.Seconds = r.Seconds
			pts = append(pts, pt)
			if pt.Algo != Hier {
				noHier = append(noHier, pt)
			}
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
	// validated past the fit: 1024 ranks
	for _, pt := range []Point{{Algo: Hier, N: 1024, L: 32}, {Algo: Hier, N: 1024, L: 32, Bidi: true}, {Algo: Hier, N: 1024, L: 32, Roots: 8}} {
		r, _ := pt.Sim(truth)
		pt.Seconds = r.Seconds
		if e, _ := RelErr(got, pt); math.Abs(e) > 1e-6 {
			t.Errorf("%+v: %v relative error", pt, e)
		}
	}
	blind, err := Fit(Params{Gathers: 2}, noHier)
	if err != nil {
		t.Fatalf("a fit with no row that pays the wake-up: %v", err)
	}
	if blind.Wake != 0 {
		t.Errorf("a fit with no row that pays the wake-up set it to %v", blind.Wake)
	}
}
