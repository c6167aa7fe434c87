package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// The wait for a CPU after a wake-up, over the window a row times
// (docs/benchmarks.md#the-simulator-2026-12-04-night). The host's share
// (avail) counts the CPU the rest of the host took; it does not count how
// long a rank that its message woke stands in the run queue before it
// runs, which with hundreds of runnable tasks on 2 cores grows with the
// queue whatever share the world had. Three readings, each one file read
// a sample:
//   - a probe: a thread of the bench's own that sleeps probePeriod and
//     wakes, again and again, as a rank asleep on its socket does, and
//     reads its own /proc/thread-self/schedstat (the run-queue delay, the
//     2nd field, and the timeslices, the 3rd) after each wake: the
//     window's delay over its wakes is the mean wait of a woken task;
//   - the host's runnable tasks (/proc/stat procs_running) at each sample;
//   - the bench's cgroup's cpu.pressure "some" total: the time at least
//     one of the world's tasks was runnable and not running.

// probePeriod is the probe's sleep: a rank's wake-ups come every hop,
// 0.1-10 ms apart on this host.
const probePeriod = time.Millisecond

// probe is the waking thread's counters, read by the sampler.
type probe struct {
	delayNs, slices atomic.Int64
	err             atomic.Value // error: the first failed read, which stops the probe
	done            chan struct{}
}

// startProbe starts the probe on a locked OS thread of its own; it stops
// when ctx ends. Its first reading is taken before it returns.
func startProbe(ctx context.Context) (*probe, error) {
	p := &probe{done: make(chan struct{})}
	first := make(chan error, 1)
	go func() {
		defer close(p.done)
		runtime.LockOSThread() // the thread's own schedstat: it must stay this thread
		defer runtime.UnlockOSThread()
		read := func() error {
			d, s, err := readSchedstat("/proc/thread-self/schedstat")
			if err != nil {
				return err
			}
			p.delayNs.Store(d)
			p.slices.Store(s)
			return nil
		}
		err := read()
		first <- err
		if err != nil {
			return
		}
		for ctx.Err() == nil {
			time.Sleep(probePeriod)
			if err := read(); err != nil {
				p.err.Store(err)
				return
			}
		}
	}()
	if err := <-first; err != nil {
		<-p.done
		return nil, fmt.Errorf("the wake-up probe: %w (a kernel without CONFIG_SCHED_INFO has no run-queue delay; -wake-wait=false runs without it)", err)
	}
	return p, nil
}

// read is the probe's counters now: its run-queue delay (s) and wakes.
func (p *probe) read() (delay, slices float64, err error) {
	if p == nil {
		return 0, 0, nil
	}
	if e, ok := p.err.Load().(error); ok {
		return 0, 0, e
	}
	return float64(p.delayNs.Load()) / 1e9, float64(p.slices.Load()), nil
}

// readSchedstat is a task's schedstat: the run-queue delay (ns) and the
// timeslices run.
func readSchedstat(path string) (delayNs, slices int64, err error) {
	var out [2]int64
	_, err = readStatFile(path, func(b []byte) (float64, error) {
		f := bytes.Fields(b)
		if len(f) != 3 {
			return 0, fmt.Errorf("%d fields, want 3 (run time, run-queue delay, timeslices)", len(f))
		}
		for i, x := range f[1:] {
			v, err := strconv.ParseInt(string(x), 10, 64)
			if err != nil || v < 0 || v > 1<<62 {
				return 0, fmt.Errorf("field %d is not a count", i+2)
			}
			out[i] = v
		}
		return 0, nil
	})
	return out[0], out[1], err
}

// parseProcsRunning is /proc/stat's procs_running: the host's runnable
// tasks at the read.
func parseProcsRunning(data []byte) (float64, error) {
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		v, ok := bytes.CutPrefix(l, []byte("procs_running "))
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 31)
		if err != nil {
			return 0, errors.New("procs_running is not a task count")
		}
		return float64(n), nil
	}
	return 0, errors.New("no procs_running line")
}

// parsePressureSome is the total (µs, as seconds) of a cgroup's
// cpu.pressure "some" line.
func parsePressureSome(data []byte) (float64, error) {
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		rest, ok := bytes.CutPrefix(l, []byte("some "))
		if !ok {
			continue
		}
		for _, kv := range bytes.Fields(rest) {
			if v, ok := bytes.CutPrefix(kv, []byte("total=")); ok {
				n, err := strconv.ParseUint(string(v), 10, 63)
				if err != nil || n > 1<<53 {
					return 0, errors.New("some total is not a microsecond count")
				}
				return float64(n) / 1e6, nil
			}
		}
		return 0, errors.New("the some line has no total")
	}
	return 0, errors.New("no some line")
}

// readHostStat reads /proc/stat once: the host's busy CPU and its runnable
// tasks.
func readHostStat(path string) (busy, runnable float64, err error) {
	_, err = readStatFile(path, func(b []byte) (float64, error) {
		var e1, e2 error
		busy, e1 = parseProcStat(b)
		runnable, e2 = parseProcsRunning(b)
		return 0, errors.Join(e1, e2)
	})
	return busy, runnable, err
}

// waitOf is the wake-up readings over a window: the mean wait of a woken
// probe (s a wake), the mean runnable tasks of the samples inside it (the
// nearest one when none is), and the share of the window at least one of
// the world's tasks waited for a CPU.
type waitOf struct {
	perWake, runnable, pressure float64
}

func windowWait(ts []tick, from, to time.Time) (waitOf, error) {
	if len(ts) < 2 || to.Before(from) {
		return waitOf{}, fmt.Errorf("%d samples, window %v..%v: no window to judge", len(ts), from, to)
	}
	from, to = widen(ts, from, to)
	a, b := interp(ts, from), interp(ts, to)
	var w waitOf
	if ds := b.slices - a.slices; ds > 0 {
		w.perWake = max(b.delay-a.delay, 0) / ds
	}
	if span := to.Sub(from).Seconds(); span > 0 {
		w.pressure = min(max(b.psi-a.psi, 0)/span, 1)
	}
	var sum float64
	k := 0
	near, best := 0, time.Duration(1<<62)
	for i, t := range ts {
		if !t.at.Before(from) && !t.at.After(to) {
			sum += t.runnable
			k++
		}
		if d := absDur(t.at.Sub(from) + t.at.Sub(to)); d < best { // nearest the middle
			near, best = i, d
		}
	}
	if k == 0 {
		w.runnable = ts[near].runnable
	} else {
		w.runnable = sum / float64(k)
	}
	return w, nil
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// pressureFile reads the cgroup's cpu.pressure "some" total, seconds; a
// kernel without PSI has no file, which is an error (the reading is asked
// for).
func (c *cgroupCPU) pressure() (float64, error) {
	if c == nil {
		return 0, nil
	}
	return readStatFile(c.dir+"/cpu.pressure", parsePressureSome)
}
