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
