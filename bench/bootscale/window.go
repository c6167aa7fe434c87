package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The host's share over the window a row times
// (docs/benchmarks.md#the-simulator-2026-12-04-evening): the share over a
// world's whole life (usage.avail) weighs its start of N processes and its
// exits as much as the boot, which at 1024 ranks is a sixth of the life.
// The window's share needs the host's busy time and the world's own CPU at
// two instants inside the world's life: /proc/stat gives the first at any
// instant, and a cgroup v2 of the bench's own (every process it starts is
// in it) gives the second as its cpu.stat usage_usec, read while the
// processes run (RUSAGE_CHILDREN counts only the reaped).

// cgroupCPU is the bench's own cgroup: the bench moves itself in, so every
// world it starts is counted, and out again at close.
type cgroupCPU struct {
	dir, parent string
}

// cgroup2Magic is CGROUP2_SUPER_MAGIC (linux/magic.h): the filesystem a
// cgroup v2 hierarchy is mounted as.
const cgroup2Magic = 0x63677270

// openCgroupCPU makes the bench's cgroup under the one it runs in, in the
// first of roots that is a cgroup v2 mount, and moves the bench into it.
func openCgroupCPU(roots []string) (*cgroupCPU, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	var rel string
	found := false
	for _, l := range strings.Split(string(self), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			rel, found = p, true
		}
	}
	if !found || strings.Contains(rel, "..") {
		return nil, errors.New("/proc/self/cgroup: no cgroup v2 line (0::<path>)")
	}
	for _, r := range roots {
		var st syscall.Statfs_t
		if syscall.Statfs(r, &st) != nil || st.Type != cgroup2Magic {
			continue
		}
		parent := filepath.Join(r, rel)
		dir := filepath.Join(parent, fmt.Sprintf("nrtabi-bootscale-%d", os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("the window's share needs a cgroup of its own: %w (run as root, or -window-share=false to grade on the share over each world's life)", err)
		}
		c := &cgroupCPU{dir: dir, parent: parent}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			os.Remove(dir)
			return nil, fmt.Errorf("%s: moving the bench in: %w (-window-share=false grades on the share over each world's life)", dir, err)
		}
		if _, err := c.usage(); err != nil {
			return nil, errors.Join(err, c.close())
		}
		return c, nil
	}
	return nil, fmt.Errorf("none of %v is a cgroup v2 mount: the window's share cannot count the world's CPU (-window-share=false grades on the share over each world's life)", roots)
}

func (c *cgroupCPU) usage() (float64, error) {
	return readStatFile(filepath.Join(c.dir, "cpu.stat"), parseCPUStat)
}

// close moves the bench back to the cgroup it came from and removes its own.
func (c *cgroupCPU) close() error {
	err := os.WriteFile(filepath.Join(c.parent, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	if err != nil {
		return fmt.Errorf("%s: moving the bench back: %w", c.parent, err)
	}
	// the children are reaped, but the kernel may take a moment to see
	// the cgroup empty
	for i := 0; ; i++ {
		if err = os.Remove(c.dir); err == nil || i == 50 {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// parseCPUStat is the usage_usec line of a cgroup v2 cpu.stat, in seconds.
func parseCPUStat(data []byte) (float64, error) {
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		v, ok := bytes.CutPrefix(l, []byte("usage_usec "))
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 63)
		if err != nil || n > 1<<53 {
			return 0, errors.New("usage_usec is not a microsecond count")
		}
		return float64(n) / 1e6, nil
	}
	return 0, errors.New("no usage_usec line")
}

// tick is one reading of the two counters: the host's busy CPU and the
// world's, seconds.
type tick struct {
	at          time.Time
	busy, world float64
	// the wake-up readings (wakewait.go): the host's runnable tasks at
	// the sample, the probe's run-queue delay (s) and wakes, the
	// cgroup's cpu.pressure some total (s); 0 when not read
	runnable, delay, slices, psi float64
}

// sampler reads the counters every period until stopped, at most max
// times (a world runs for -run-timeout at most).
type sampler struct {
	mu    sync.Mutex
	ticks []tick
	err   error
	stop  context.CancelFunc
	done  chan struct{}
}

func startSampler(ctx context.Context, period time.Duration, max int, read func() (tick, error)) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{stop: cancel, done: make(chan struct{})}
	take := func() bool {
		t, err := read()
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case err != nil:
			s.err = err
		case len(s.ticks) >= max:
			s.err = fmt.Errorf("more than %d samples of the host's CPU: the world ran past the sampler's bound", max)
		default:
			s.ticks = append(s.ticks, t)
			return true
		}
		return false
	}
	ok := take() // the first before the world starts
	go func() {
		defer close(s.done)
		if !ok {
			return
		}
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				if !take() {
					return
				}
			}
		}
	}()
	return s
}

// finish stops the sampler after one last reading and returns them all.
func (s *sampler) finish(read func() (tick, error)) ([]tick, error) {
	s.stop()
	<-s.done
	t, err := read()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if err != nil {
		return nil, err
	}
	return append(s.ticks, t), nil
}

// minWindow is the shortest window a share is judged on: /proc/stat counts
// in ticks of 10 ms (userHZ), so a shorter window is widened about its
// middle to this, inside the samples.
const minWindow = 50 * time.Millisecond

// windowUsage is what the world and the host used from from to to, the
// counters interpolated between the samples either side. A window outside
// the samples is an error: its edges were not read inside the world's life.
func windowUsage(ts []tick, from, to time.Time) (usage, error) {
	if len(ts) < 2 || to.Before(from) {
		return usage{}, fmt.Errorf("%d samples, window %v..%v: no window to judge", len(ts), from, to)
	}
	first, last := ts[0].at, ts[len(ts)-1].at
	if from.Before(first) || to.After(last) {
		return usage{}, fmt.Errorf("the window %s..%s is outside the samples %s..%s",
			from.Format(time.StampMicro), to.Format(time.StampMicro), first.Format(time.StampMicro), last.Format(time.StampMicro))
	}
	from, to = widen(ts, from, to)
	a, b := interp(ts, from), interp(ts, to)
	return usage{cpu: b.world - a.world, wall: to.Sub(from).Seconds(), hostBusy: b.busy - a.busy}, nil
}

// widen is a window below minWindow widened about its middle to it,
// inside the samples (all of them when they span less).
func widen(ts []tick, from, to time.Time) (time.Time, time.Time) {
	first, last := ts[0].at, ts[len(ts)-1].at
	if w := to.Sub(from); w < minWindow {
		if last.Sub(first) <= minWindow {
			from, to = first, last
		} else {
			from = from.Add(-(minWindow - w) / 2)
			if from.Before(first) {
				from = first
			}
			to = from.Add(minWindow)
			if to.After(last) {
				to, from = last, last.Add(-minWindow)
			}
		}
	}
	return from, to
}

// interp is the counters at t, linear between the samples either side.
func interp(ts []tick, t time.Time) tick {
	i := 1
	for i < len(ts)-1 && ts[i].at.Before(t) {
		i++
	}
	a, b := ts[i-1], ts[i]
	span := b.at.Sub(a.at).Seconds()
	if span <= 0 {
		return b
	}
	f := min(max(t.Sub(a.at).Seconds()/span, 0), 1)
	lerp := func(x, y float64) float64 { return x + f*(y-x) }
	return tick{at: t, busy: lerp(a.busy, b.busy), world: lerp(a.world, b.world), runnable: b.runnable,
		delay: lerp(a.delay, b.delay), slices: lerp(a.slices, b.slices), psi: lerp(a.psi, b.psi)}
}
