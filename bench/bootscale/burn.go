package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// The background load the bench starts and stops itself (-burn K), so the
// fit's small worlds (N <= 64) run under the run queue the large ones
// meet (docs/benchmarks.md#the-simulator-2026-12-04-night): at 512 and
// 1024 ranks the host had 150-556 runnable tasks, at the fit's sizes 4-70,
// and a cost fitted on the second is extrapolated to the first. A burner
// is what a rank of a large world is to the others: a process that wakes
// every -burn-period (1 ms by default), touches its own memory (a rank's heap, cold in the
// cache after the others ran) and sleeps again. K of them are K more
// tasks in the queue and K working sets in the caches.

// burnerEnv marks a child of the bench as a burner; its value is the
// burner's sleep between two touches of its memory (a Go duration).
const burnerEnv = "NRTABI_BOOTSCALE_BURNER"

// burnBytes is a burner's working set: a Go rank's live heap is a few
// hundred KB (docs/benchmarks.md#package-memory).
const burnBytes = 256 << 10

// burnLimit bounds a burner's life: a burner whose bench died without
// killing it exits by itself (its parent gone, or this long at most).
const burnLimit = 30 * time.Minute

// maxBurners bounds -burn.
const maxBurners = 1024

// burnerMain is a burner's whole life. It returns when its parent is gone
// or after burnLimit.
func burnerMain(period time.Duration) {
	parent := os.Getppid()
	buf := make([]byte, burnBytes)
	end := time.Now().Add(burnLimit)
	for i := 0; time.Now().Before(end) && os.Getppid() == parent; i++ {
		for j := 0; j < len(buf); j += 64 { // one write a cache line
			buf[j] += byte(i)
		}
		time.Sleep(period)
	}
}

// burners are the running burners.
type burners struct {
	cmds []*exec.Cmd
}

// startBurners starts k burners (the bench's own binary re-run) and, when
// the bench has a cgroup of its own, moves them out of it into its parent,
// so the world's CPU over a window (the cgroup's usage) is the world's and
// the burners are the rest of the host. Each dies with the bench
// (Pdeathsig) and at stop.
func startBurners(ctx context.Context, k int, period time.Duration, cg *cgroupCPU) (*burners, error) {
	if k < 0 || k > maxBurners {
		return nil, fmt.Errorf("-burn %d: want 0..%d background processes", k, maxBurners)
	}
	if period < 100*time.Microsecond || period > time.Second {
		return nil, fmt.Errorf("-burn-period %v: want 100us..1s", period)
	}
	b := &burners{}
	if k == 0 {
		return b, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("-burn: the bench's own binary: %w", err)
	}
	for i := 0; i < k; i++ {
		cmd := exec.CommandContext(ctx, self)
		cmd.Env = append(os.Environ(), burnerEnv+"="+period.String())
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return nil, errors.Join(fmt.Errorf("-burn: burner %d of %d: %w", i+1, k, err), b.stop())
		}
		b.cmds = append(b.cmds, cmd)
		if cg != nil {
			procs := filepath.Join(cg.parent, "cgroup.procs")
			if err := os.WriteFile(procs, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
				return nil, errors.Join(fmt.Errorf("-burn: moving burner %d out of the bench's cgroup (%s): %w", cmd.Process.Pid, procs, err), b.stop())
			}
		}
	}
	return b, nil
}

// stop kills every burner by its pid and reaps it.
func (b *burners) stop() error {
	if b == nil {
		return nil
	}
	var errs []error
	for _, c := range b.cmds {
		if err := c.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			errs = append(errs, err)
		}
	}
	for _, c := range b.cmds {
		_ = c.Wait() // killed: its exit status is the signal
	}
	b.cmds = nil
	return errors.Join(errs...)
}
