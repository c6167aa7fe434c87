package main

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/bench/bootsim"
)

// gradeLine is printGrades' summary of the validation rows.
var gradeLine = regexp.MustCompile(`validation \(N > \d+\): (\d+) rows, largest error [0-9.]+%, (\d+) MISSED`)

// gradeOf runs printGrades on f and returns its validation rows and misses.
func gradeOf(t *testing.T, f *bootsim.Fitted) (rows, missed int, text string) {
	t.Helper()
	var out strings.Builder
	if err := printGrades(&out, f, nil); err != nil {
		t.Fatal(err)
	}
	m := gradeLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no validation summary in:\n%s", out.String())
	}
	rows, _ = strconv.Atoi(m[1])
	missed, _ = strconv.Atoi(m[2])
	return rows, missed, out.String()
}

// TestGraderFailsPlantedWrongModel: rows made by one model (its one-way
// intra rings sleeping as rings of L, each sleeping receive paying its
// wake-up's CPU) pass the grader under that model, every row, and fail it
// under two planted wrong ones: the wake-up's CPU left out (a sleeping
// receive free), and the same wrong family fitted on the rows of N <= 64,
// which the fit can bend to match there but not past them. A grader that
// passed either would be grading nothing. Under 0.5 s (the fit).
func TestGraderFailsPlantedWrongModel(t *testing.T) {
	start := time.Now()
	truth := bootsim.Params{Gathers: 2, RankDelay: true, Cores: 2, Accept: 2e-4, Hop: 8e-5, BidiExtra: 1e-4,
		WakeFixed: 4e-5, WakeWork: 3.5e-5, StartWork: 4e-4, BidiWork: 7e-6}
	f := &bootsim.Fitted{NProc: "2", FitMaxN: 64, Go: truth, C: truth}
	for _, v := range []struct {
		name string
		algo bootsim.Algo
		bidi bool
	}{{"flat-go", bootsim.Flat, false}, {"hier-go", bootsim.Hier, false}, {"hier-go-bidi", bootsim.Hier, true}} {
		for _, n := range []int{8, 16, 32, 64, 128, 256, 512} {
			l := 0
			if v.algo == bootsim.Hier {
				l = int(math.Ceil(math.Sqrt(float64(n))))
			}
			pt := bootsim.Point{Algo: v.algo, N: n, L: l, Bidi: v.bidi, Avail: 0.6}
			r, err := pt.Sim(truth)
			if err != nil {
				t.Fatal(err)
			}
			f.Rows = append(f.Rows, bootsim.MeasuredRow{Variant: v.name, Algo: v.algo.String(), Lang: "go", Bidi: v.bidi,
				N: n, L: l, BootMs: r.Seconds * 1e3, AgreeMs: r.Seconds * 1e3, Avail: 0.6})
		}
	}
	if rows, missed, out := gradeOf(t, f); rows != 9 || missed != 0 {
		t.Fatalf("the true model: %d validation rows, %d MISSED, want 9 and 0:\n%s", rows, missed, out)
	}

	free := truth
	free.WakeWork = 0 // planted: a receive that sleeps costs the cores nothing
	f.Go = free
	if _, missed, out := gradeOf(t, f); missed == 0 {
		t.Errorf("a model with sleeping receives free: no row MISSED:\n%s", out)
	} else {
		t.Logf("sleeping receives free: %d of 9 MISSED", missed)
	}

	// the same wrong family fitted on the rows of N <= 64 only
	var train []bootsim.Point
	for _, r := range f.Rows {
		if r.N <= f.FitMaxN {
			pt, err := pointOf(r)
			if err != nil {
				t.Fatal(err)
			}
			train = append(train, pt)
		}
	}
	fit, err := bootsim.Fit(bootsim.Params{Gathers: 2, RankDelay: true, Cores: 2}, train)
	if err != nil {
		t.Fatal(err)
	}
	fit.WakeWork = 0
	f.Go = fit
	if _, missed, out := gradeOf(t, f); missed == 0 {
		t.Errorf("the wrong family fitted on N <= 64 (%s): no row MISSED:\n%s", costs(fit), out)
	} else {
		t.Logf("the wrong family fitted on N <= 64: %d of 9 MISSED", missed)
	}
	t.Logf("%v", time.Since(start))
}

// TestGraderFailsModelBlindToRunQueue: rows made by a model whose every
// cost grows with the host's runnable tasks (Crowd), the large worlds run
// in a longer queue than the small ones, and the small ones measured
// twice, once beside the bench's burners (a queue as long as the large
// worlds'): fitted on N <= 64 with the term, every row passes; the same
// family fitted with Crowd pinned to 0 (-crowd=false) bends to the small
// rows and misses the large ones. Under 2 s (two fits).
func TestGraderFailsModelBlindToRunQueue(t *testing.T) {
	start := time.Now()
	truth := bootsim.Params{Gathers: 2, RankDelay: true, Cores: 2, Accept: 2e-4, Hop: 8e-5, BidiExtra: 1e-4,
		WakeFixed: 4e-5, WakeWork: 3.5e-5, StartWork: 4e-4, BidiWork: 7e-6, Crowd: 4e-3}
	f := &bootsim.Fitted{NProc: "2", FitMaxN: 64, Go: truth, C: truth}
	add := func(name string, algo bootsim.Algo, bidi bool, n, burn int, run float64) {
		l := 0
		if algo == bootsim.Hier {
			l = int(math.Ceil(math.Sqrt(float64(n))))
		}
		pt := bootsim.Point{Algo: algo, N: n, L: l, Bidi: bidi, Avail: 0.6, Runnable: run}
		r, err := pt.Sim(truth)
		if err != nil {
			t.Fatal(err)
		}
		f.Rows = append(f.Rows, bootsim.MeasuredRow{Variant: name, Algo: algo.String(), Lang: "go", Bidi: bidi, N: n, L: l,
			BootMs: r.Seconds * 1e3, AgreeMs: r.Seconds * 1e3, Avail: 0.6, Burn: burn, RunnableBoot: run, RunnableAgree: run})
	}
	for _, v := range []struct {
		name string
		algo bootsim.Algo
		bidi bool
	}{{"star", bootsim.Star, false}, {"flat-go", bootsim.Flat, false}, {"hier-go", bootsim.Hier, false}, {"flat-go-bidi", bootsim.Flat, true}} {
		for _, n := range []int{8, 16, 32, 64, 128, 256, 512} {
			add(v.name, v.algo, v.bidi, n, 0, float64(n)/2) // a world's own queue: half its ranks
			if n <= 64 {
				add(v.name, v.algo, v.bidi, n, 256, 256+float64(n)/2)
			}
		}
	}
	fitWith := func(crowd bool) bootsim.Params {
		t.Helper()
		var train []bootsim.Point
		for _, r := range f.Rows {
			if r.N <= f.FitMaxN {
				pt, err := pointOf(r)
				if err != nil {
					t.Fatal(err)
				}
				if !crowd {
					pt.Runnable = 0
				}
				train = append(train, pt)
			}
		}
		base := bootsim.Params{Gathers: 2, RankDelay: true, Cores: 2, WakeWork: truth.WakeWork, Work: truth.Work}
		p, err := bootsim.Fit(base, train)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	defer func(was bool) { useCrowd = was }(useCrowd)
	useCrowd = true
	f.Go = fitWith(true)
	if rows, missed, out := gradeOf(t, f); rows != 12 || missed != 0 {
		t.Fatalf("the family with the run queue's term, fitted on N <= 64: %d validation rows, %d MISSED, want 12 and 0 (%s):\n%s", rows, missed, costs(f.Go), out)
	}
	useCrowd = false
	f.Go = fitWith(false)
	if _, missed, out := gradeOf(t, f); missed == 0 {
		t.Errorf("blind to the run queue, fitted on N <= 64 (%s): no row MISSED:\n%s", costs(f.Go), out)
	} else {
		t.Logf("blind to the run queue: %d of 12 MISSED", missed)
	}
	t.Logf("%v", time.Since(start))
}
