package main

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/bench/bootsim"
)

func TestParseCPUStat(t *testing.T) {
	got, err := parseCPUStat([]byte("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n"))
	if err != nil || got != 1.5 {
		t.Errorf("usage %v, %v; want 1.5 s", got, err)
	}
	for _, bad := range []string{"", "user_usec 5\n", "usage_usec x\n", "usage_usec -1\n", "usage_usec 99999999999999999999\n"} {
		if v, err := parseCPUStat([]byte(bad)); err == nil {
			t.Errorf("%q: read %v", bad, v)
		}
	}
}

func FuzzParseCPUStat(f *testing.F) {
	f.Add([]byte("usage_usec 1500000\nuser_usec 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseCPUStat(data)
		if err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("usage %v", v)
		}
	})
}

// planted is a host of 2 cores sampled every 10 ms for 1 s: the world
// uses one core throughout, another session the other core only from
// busyFrom to busyTo (s).
func planted(busyFrom, busyTo float64) []tick {
	t0 := time.Unix(1000, 0)
	var ts []tick
	for i := 0; i <= 100; i++ {
		s := float64(i) / 100
		other := min(max(s-busyFrom, 0), busyTo-busyFrom)
		ts = append(ts, tick{at: t0.Add(time.Duration(i) * 10 * time.Millisecond), busy: s + other, world: s})
	}
	return ts
}

// TestWindowUsage: the share over a window sees a load the share over the
// life averages away (the planted fault: another session's core taken
// only inside the window), and a load outside the window is not charged
// to it.
func TestWindowUsage(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))) }
	inside := planted(0.5, 0.7) // the other core taken only over 0.5..0.7 s
	life, err := windowUsage(inside, at(0), at(1))
	if err != nil {
		t.Fatal(err)
	}
	win, err := windowUsage(inside, at(0.5), at(0.7))
	if err != nil {
		t.Fatal(err)
	}
	if a := life.avail(2); math.Abs(a-0.9) > 1e-9 {
		t.Errorf("over the life: %v, want 0.9", a)
	}
	if a := win.avail(2); math.Abs(a-0.5) > 1e-9 {
		t.Errorf("over the window: %v, want 0.5 (the other session had a whole core)", a)
	}
	before := planted(0, 0.2) // the load over the world's start, not its window
	win, err = windowUsage(before, at(0.5), at(0.7))
	if err != nil || win.avail(2) != 1 {
		t.Errorf("a load before the window charged to it: %v, %v", win.avail(2), err)
	}
	// a window of 5 ms is judged on 50 ms about its middle
	short, err := windowUsage(inside, at(0.6), at(0.605))
	if err != nil || math.Abs(short.wall-0.05) > 1e-9 || math.Abs(short.avail(2)-0.5) > 1e-9 {
		t.Errorf("a short window: %+v, %v", short, err)
	}
	// widened at the samples' end, it stays inside them
	if u, err := windowUsage(inside, at(0.999), at(1)); err != nil || math.Abs(u.wall-0.05) > 1e-9 {
		t.Errorf("a short window at the end: %+v, %v", u, err)
	}
	if _, err := windowUsage(inside, at(-0.1), at(0.5)); err == nil {
		t.Error("a window starting before the samples was judged")
	}
	if _, err := windowUsage(inside, at(0.5), at(1.1)); err == nil {
		t.Error("a window ending after the samples was judged")
	}
	if _, err := windowUsage(inside[:1], at(0), at(0)); err == nil {
		t.Error("one sample was a window")
	}
}

// TestSampler: it reads until stopped, and a failed read or too many
// samples fail it rather than leave a window unsampled.
func TestSampler(t *testing.T) {
	n := 0
	read := func() (tick, error) { n++; return tick{at: time.Now(), busy: float64(n)}, nil }
	s := startSampler(context.Background(), time.Millisecond, 1000, read)
	time.Sleep(20 * time.Millisecond)
	ts, err := s.finish(read)
	if err != nil || len(ts) < 3 {
		t.Errorf("%d samples, %v", len(ts), err)
	}
	s = startSampler(context.Background(), time.Millisecond, 2, read)
	time.Sleep(20 * time.Millisecond)
	if _, err := s.finish(read); err == nil {
		t.Error("past the bound: no error")
	}
	bad := func() (tick, error) { return tick{}, errors.New("planted") }
	s = startSampler(context.Background(), time.Millisecond, 100, bad)
	if _, err := s.finish(read); err == nil {
		t.Error("a failed read: no error")
	}
}

// TestPointTakesWindowShare: a row that carries the windows' shares is
// judged on them, an older row on the life's.
func TestPointTakesWindowShare(t *testing.T) {
	r := bootsim.MeasuredRow{Algo: "flat", Lang: "go", N: 8, BootMs: 5, AgreeMs: 9, Avail: 0.9, AvailBoot: 0.6, AvailAgree: 0.7}
	b, err1 := pointOf(r)
	a, err2 := agreePointOf(r)
	if err1 != nil || err2 != nil || b.Avail != 0.6 || a.Avail != 0.7 || a.Seconds != 9e-3 {
		t.Errorf("boot %+v, agree %+v (%v, %v): want the windows' 0.6 and 0.7", b, a, err1, err2)
	}
	r.AvailBoot, r.AvailAgree = 0, 0
	if b, _ := pointOf(r); b.Avail != 0.9 {
		t.Errorf("an older row: %v, want the life's 0.9", b.Avail)
	}
}
