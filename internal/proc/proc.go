// Package proc starts the child processes nrtabi waits for (the compiler
// driver, go build, rank processes, C hosts) so that they end with their
// context: each runs in its own process group, the whole group is killed
// when the context ends (a driver's cc1, as and ld, or a go build's compile
// jobs, die with it), and Wait stops waiting for output pipes a leftover
// grandchild still holds once WaitDelay has passed. A deadline on the
// context is then a deadline on the wait, which time.AfterFunc + Kill of
// the direct child alone did not give.
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// WaitDelay bounds how long Wait waits for the output pipes after the
// group was killed or the child exited.
const WaitDelay = 2 * time.Second

// Command is exec.CommandContext(ctx, name, args...) whose cancellation
// kills the child's process group.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = WaitDelay
	return cmd
}

// Err names the context's end as the cause of a wait it cut short: a
// killed child reports only "signal: killed", which says nothing of the
// deadline that killed it.
func Err(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	}
	return err
}
