package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/bench/bootsim"
)

func TestParseProcStat(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	got, err := parseProcStat([]byte("cpu  100 20 30 5000 70 1 2 3 40 50\ncpu0 1 2 3 4\n"))
	if err != nil || math.Abs(got-1.56) > 1e-9 { // (100+20+30+1+2+3)/100 s; idle, iowait and guest out
		t.Errorf("busy %v, %v; want 1.56 s", got, err)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5", "cpu 1 2 3", "cpu 1 2 x 4 5", "cpu -1 2 3 4 5",
		"cpu 4611686018427387903 4611686018427387903 1 2 3", "intr 1 2 3 4 5"} {
		if v, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q: read %v", bad, v)
		}
	}
}

func TestReadProcStatRefusesNonRegular(t *testing.T) {
	if _, err := readProcStat(t.TempDir()); err == nil {
		t.Error("a directory was read as /proc/stat")
	}
	p := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(p, []byte("cpu 1 1 1 1 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := readProcStat(p); err != nil || v != 0.03 { // user, nice, system; idle and iowait out
		t.Errorf("%v %v", v, err)
	}
}

// TestAvail: the share is what the rest of the host left, bounded, and
// catches a planted load (another session's CPU over the same wall).
func TestAvail(t *testing.T) {
	idle := usage{cpu: 1.0, wall: 1.0, hostBusy: 1.0}
	if a := idle.avail(2); a != 1 {
		t.Errorf("a host busy only with the world: %v, want 1", a)
	}
	loaded := usage{cpu: 0.5, wall: 1.0, hostBusy: 1.5} // another session took 1 of the 2 cores
	if a := loaded.avail(2); math.Abs(a-0.5) > 1e-9 {
		t.Errorf("half the host taken: %v, want 0.5", a)
	}
	if a := (usage{cpu: 0, wall: 1, hostBusy: 10}).avail(2); a != 0.5 {
		t.Errorf("more than the host: %v, want the floor 1/cores", a)
	}
	if a := (usage{}).avail(2); a != 1 {
		t.Errorf("no wall time: %v", a)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("cpu  100 20 30 5000 70 1 2 3 40 50\n"))
	f.Add([]byte("cpu 1 2 3 4"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseProcStat(data)
		if err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("busy %v", v)
		}
	})
}

// TestCPUSplit: a planted host of 2 ms per rank, 30 us per switch and 5
// us per ring message is recovered from its rows' CPU; too few rows, or
// rows without the counts, give no split. Microseconds.
func TestCPUSplit(t *testing.T) {
	var rows []bootsim.MeasuredRow
	for _, n := range []int{8, 16, 32, 64} {
		for _, sw := range []float64{100, 300} { // switches per rank: a star-like and a ring-like row
			ns := sw * float64(n) * math.Sqrt(float64(n))
			m := bootsim.Messages(bootsim.Flat, n, 0, false, 4)
			rows = append(rows, bootsim.MeasuredRow{Variant: "v", Algo: "flat", Lang: "go", N: n, BootMs: 1,
				CPUMs: (2e-3*float64(n) + 30e-6*ns + 5e-6*m) * 1e3, Nvcsw: ns})
		}
	}
	rows = append(rows, bootsim.MeasuredRow{Variant: "big", Lang: "go", N: 512, CPUMs: 1e9, Nvcsw: 1}) // past the fit: not seen
	pr, ps, pm, ok := cpuSplit(rows, "", "go", 64, nil)
	if !ok || math.Abs(pr-2e-3) > 1e-9 || math.Abs(ps-30e-6) > 1e-11 || math.Abs(pm-5e-6) > 1e-11 {
		t.Errorf("split %v s a rank, %v s a switch, %v s a message, %v; want 2 ms, 30 us, 5 us", pr, ps, pm, ok)
	}
	if _, _, _, ok := cpuSplit(rows[:3], "", "go", 64, nil); ok {
		t.Error("three rows gave a split of three costs")
	}
	if _, _, _, ok := cpuSplit(rows, "", "c", 64, nil); ok {
		t.Error("no C row gave a split")
	}
}

// TestFitAgreeWork: a planted per-rank setup of the agree phase is found
// from agree rows made with it; rows made without it give 0. Milliseconds.
func TestFitAgreeWork(t *testing.T) {
	p := bootsim.Params{Cores: 2, Hop: 1e-4, WakeWork: 3e-5, Gathers: 2, PerNC: true}
	truth := p
	truth.AgreeWork = 6e-4
	var with, without []bootsim.Point
	for _, n := range []int{8, 16, 32, 64} {
		pt := bootsim.Point{Algo: bootsim.Flat, N: n}
		r, err := pt.Sim(truth)
		if err != nil {
			t.Fatal(err)
		}
		r0, err := pt.Sim(p)
		if err != nil {
			t.Fatal(err)
		}
		pt.Seconds = r.Seconds
		with = append(with, pt)
		pt.Seconds = r0.Seconds
		without = append(without, pt)
	}
	if w, err := fitAgreeWork(p, with); err != nil || math.Abs(w-6e-4) > 6e-6 {
		t.Errorf("fitted %v s a rank (%v), planted 600 us", w, err)
	}
	if w, err := fitAgreeWork(p, without); err != nil || w != 0 {
		t.Errorf("no setup planted: fitted %v s a rank (%v)", w, err)
	}
}
