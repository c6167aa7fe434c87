package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseWakeReadings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "schedstat")
	if err := os.WriteFile(p, []byte("648319399 1359311114 253\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, s, err := readSchedstat(p); err != nil || d != 1359311114 || s != 253 {
		t.Errorf("schedstat: %d ns, %d slices, %v; want 1359311114, 253", d, s, err)
	}
	for _, bad := range []string{"", "1 2\n", "1 2 3 4\n", "1 -2 3\n", "1 x 3\n"} {
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if d, s, err := readSchedstat(p); err == nil {
			t.Errorf("schedstat %q: read %d, %d", bad, d, s)
		}
	}
	if n, err := parseProcsRunning([]byte("cpu 1 2 3 4 5\nprocs_running 17\nprocs_blocked 0\n")); err != nil || n != 17 {
		t.Errorf("procs_running: %v, %v; want 17", n, err)
	}
	for _, bad := range []string{"", "procs_running\n", "procs_running -1\n", "procs_running 1e3\n"} {
		if n, err := parseProcsRunning([]byte(bad)); err == nil {
			t.Errorf("procs_running %q: read %v", bad, n)
		}
	}
	psi := "some avg10=11.21 avg60=3.56 avg300=6.95 total=5232243358\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if v, err := parsePressureSome([]byte(psi)); err != nil || v != 5232.243358 {
		t.Errorf("cpu.pressure: %v, %v; want 5232.243358 s", v, err)
	}
	for _, bad := range []string{"", "full total=3\n", "some avg10=1\n", "some total=x\n"} {
		if v, err := parsePressureSome([]byte(bad)); err == nil {
			t.Errorf("cpu.pressure %q: read %v", bad, v)
		}
	}
}

func FuzzParseWakeReadings(f *testing.F) {
	f.Add([]byte("procs_running 3\n"))
	f.Add([]byte("some avg10=1.00 total=12\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) (float64, error){parseProcsRunning, parsePressureSome} {
			if v, err := parse(data); err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Fatalf("%q: %v", data, v)
			}
		}
	})
}

// TestWindowWait: the wait per wake over a window is the probe's delay
// over its wakes inside it (the planted fault: the probe waits 2 ms a
// wake only over 0.5..0.7 s, 0.1 ms elsewhere), the runnable tasks the
// samples' inside it, the pressure its share of the window.
func TestWindowWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var ts []tick
	var delay, psi float64
	for i := 0; i <= 100; i++ {
		s := float64(i) / 100
		run, per := 4.0, 1e-4
		if s > 0.5 && s <= 0.7 {
			run, per = 300, 2e-3
			psi += 0.01 // waited the whole 10 ms
		}
		if i > 0 {
			delay += 10 * per // 10 wakes a sample
		}
		ts = append(ts, tick{at: at(s), runnable: run, delay: delay, slices: float64(10 * i), psi: psi})
	}
	in, err := windowWait(ts, at(0.5), at(0.7))
	if err != nil {
		t.Fatal(err)
	}
	all, err := windowWait(ts, at(0), at(1))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(in.perWake-2e-3) > 1e-9 || math.Abs(in.pressure-1) > 1e-9 {
		t.Errorf("inside: %v s a wake, pressure %v; want 2 ms and 1", in.perWake, in.pressure)
	}
	if in.runnable < 250 {
		t.Errorf("inside: %v runnable; want the window's ~300", in.runnable)
	}
	if all.perWake > 5e-4 || all.runnable > 70 {
		t.Errorf("the whole life: %v s a wake, %v runnable: the window's wait averaged away should read lower", all.perWake, all.runnable)
	}
	if _, err := windowWait(ts[:1], at(0), at(1)); err == nil {
		t.Error("one sample: judged a window")
	}
}

// TestProbe: the probe on this host reads its own thread's run-queue
// delay and counts its wakes. About 10 ms on an idle host.
func TestProbe(t *testing.T) {
	if _, _, err := readSchedstat("/proc/thread-self/schedstat"); err != nil {
		t.Skipf("this kernel has no per-task schedstat (%v): the probe cannot run here", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p, err := startProbe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, s0, _ := p.read()
	// on a loaded host a 1 ms sleep may take far longer: wait for 5 wakes, 5 s at most
	var d, s1 float64
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && s1-s0 < 5 && err == nil; {
		time.Sleep(10 * time.Millisecond)
		d, s1, err = p.read()
	}
	cancel()
	<-p.done
	if err != nil || s1-s0 < 5 || d < 0 {
		t.Errorf("the probe: %v more wakes of 1 ms sleeps in 5 s, delay %v s, %v; want at least 5", s1-s0, d, err)
	}
}
