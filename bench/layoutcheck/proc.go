package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one whole-process run: wall time from start to reap, and the
// child's peak RSS and CPU time from the rusage wait4 returned for it
// (os.ProcessState.SysUsage).
type sample struct {
	wall   time.Duration
	cpu    time.Duration // user + system, the child's and its waited-for descendants'
	maxRSS int64         // bytes
	// floor is the bench's own peak RSS when it started the child. Linux
	// carries the parent's peak into a child that os/exec starts (clone
	// with CLONE_VM, then exec: exec_mmap keeps the old mm's high-water
	// mark), so a child's maxRSS is never below it; a reading at the floor
	// says only "at most floor".
	floor    int64
	code     int
	timedOut bool
	out      []byte // standard output when it was not sent to a file
	errOut   []byte // standard error, its first 64 KiB
}

// capped keeps the first n bytes written to it.
type capped struct {
	b bytes.Buffer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// selfPeak is the bench's own memory's high-water mark in bytes (VmHWM of
// /proc/self/status): what exec carries into a child that shares it. Not
// getrusage(RUSAGE_SELF), which also holds what the bench itself
// inherited from whoever started it (`go run`: the go command's peak).
func selfPeak() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// lowerPeak brings the bench's high-water mark down to what it holds now,
// so that the floor a child inherits is the bench's present size and not
// the largest it ever was: the heap's free pages go back to the kernel,
// then "5" in /proc/self/clear_refs resets VmHWM to the current RSS
// (proc(5)). When the kernel refuses, the floor is simply higher, and it
// is still read and printed.
func lowerPeak() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// runSpec is one process to run: its standard output goes to outFile
// (truncated first), to /dev/null when outFile is os.DevNull, or into the
// sample when outFile is "". timeout 0 is none.
type runSpec struct {
	bin     string
	args    []string
	outFile string
	timeout time.Duration
}

func (r runSpec) String() string { return strings.TrimSpace(r.bin + " " + strings.Join(r.args, " ")) }

// runProc runs r as a whole process and reads its rusage. A run killed at
// its timeout returns timedOut and no error.
func runProc(ctx context.Context, r runSpec) (sample, error) {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, r.bin, r.args...)
	// Its own process group, killed whole at the timeout: a tool's
	// children (sh -c, xargs) must not outlive it holding its output.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	errOut := &capped{n: 64 << 10}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if r.outFile != "" {
		f, err := os.Create(r.outFile)
		if err != nil {
			return sample{}, err
		}
		defer f.Close()
		cmd.Stdout = f
	}
	lowerPeak()
	floor := selfPeak()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		return sample{}, fmt.Errorf("%s: did not start: %w", r, err)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return sample{}, fmt.Errorf("%s: %w", r, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, fmt.Errorf("%s: no rusage from wait4", r)
	}
	s := sample{
		wall:   wall,
		cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		maxRSS: ru.Maxrss * 1024,
		floor:  floor,
		code:   cmd.ProcessState.ExitCode(),
		out:    out.Bytes(),
		errOut: errOut.b.Bytes(),
	}
	if ctx.Err() != nil && r.timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		s.timedOut = true
	}
	return s, nil
}

// firstLine is the first line of a tool's standard error, for a note.
func firstLine(b []byte) string {
	l, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return l
}

func clip(b []byte) string {
	const n = 2000
	if len(b) > n {
		return string(b[:n]) + "\n[...]"
	}
	return string(b)
}
