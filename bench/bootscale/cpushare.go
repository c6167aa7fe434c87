package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"
)

// usage is what one world cost the host, measured around it
// (docs/benchmarks.md#the-simulator): the CPU its processes used (user +
// sys of every process the world reaped, RUSAGE_CHILDREN), their voluntary
// context switches, the world's wall time, and the CPU the whole host was
// busy for meanwhile (/proc/stat), so the share the other sessions took is
// busy - cpu. The simulator takes the share left to the world as an input,
// measured, never fitted.
type usage struct {
	cpu, wall, hostBusy float64 // seconds
	nvcsw               float64
}

// avail is the fraction of the host's cores the world could have had: 1
// minus what the rest of the host used over the world's wall time, at
// least 1/cores (a world always gets some CPU: the tick counts are 10 ms
// coarse) and at most 1.
func (u usage) avail(cores int) float64 {
	if u.wall <= 0 || cores < 1 {
		return 1
	}
	other := max(u.hostBusy-u.cpu, 0)
	a := 1 - other/(float64(cores)*u.wall)
	return min(max(a, 1/float64(cores)), 1)
}

// sample is one reading of the counters usage is the difference of.
type sample struct {
	at       time.Time
	children syscall.Rusage
	busy     float64 // seconds of CPU the host has been busy, all CPUs
}

func takeSample() (sample, error) {
	s := sample{at: time.Now()}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &s.children); err != nil {
		return s, fmt.Errorf("getrusage: %w", err)
	}
	b, err := readProcStat("/proc/stat")
	if err != nil {
		return s, err
	}
	s.busy = b
	return s, nil
}

func since(a, b sample) usage {
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return usage{
		cpu:      tv(b.children.Utime) + tv(b.children.Stime) - tv(a.children.Utime) - tv(a.children.Stime),
		wall:     b.at.Sub(a.at).Seconds(),
		hostBusy: b.busy - a.busy,
		nvcsw:    float64(b.children.Nvcsw - a.children.Nvcsw),
	}
}

// userHZ is the unit of /proc/stat's counters (USER_HZ, 100 on Linux for
// every architecture's ABI).
const userHZ = 100

// maxProcStat bounds the read: the first line is all that is parsed.
const maxProcStat = 1 << 16

// readProcStat is the host's busy CPU time in seconds: the first line of
// /proc/stat, every field but idle and iowait (guest time is already in
// user).
func readProcStat(path string) (float64, error) { return readStatFile(path, parseProcStat) }

// readStatFile reads one kernel statistics file (/proc/stat, a cgroup's
// cpu.stat), at most maxProcStat bytes, and parses it. It opens only a
// regular file (procfs and cgroupfs files are), so a FIFO put in its place
// cannot hold the bench at open.
func readStatFile(path string, parse func([]byte) (float64, error)) (float64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxProcStat))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	v, err := parse(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// parseProcStat reads the aggregate "cpu" line: user nice system idle
// iowait irq softirq steal [guest guest_nice], in USER_HZ ticks.
func parseProcStat(data []byte) (float64, error) {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0, errors.New(`the first line is not the aggregate "cpu" line`)
	}
	var busy uint64
	for i, x := range f[1:min(len(f), 9)] { // guest and guest_nice are in user and nice
		v, err := strconv.ParseUint(string(x), 10, 63)
		if err != nil {
			return 0, fmt.Errorf("cpu field %d is not a tick count", i+1)
		}
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if busy+v < busy || busy+v > 1<<62 {
			return 0, errors.New("cpu tick counts overflow")
		}
		busy += v
	}
	return float64(busy) / userHZ, nil
}
