package worldprog

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// A timed world holds each rank twice on the launcher's pipe to its stdin
// (docs/nrtabi-runtime-bootstrap.md#timed-worlds): once started, until
// every rank is (runtime/launch's --local --timing writes HoldGo), and once
// it has agreed and said so (its report line, or AgreedLine), until every
// rank has or one has ended (the launcher closes the pipe; LaunchHeld takes
// only this one). The first keeps process
// creation out of the measured phases; the second keeps out the exits of
// the ranks that finished first, which on a shared host take the CPU the
// ranks still agreeing need. A job's ranks do not exit after their init:
// they go on to their first collective and wait there, idle.

// HoldGo is the launcher's start line.
const HoldGo = "go"

// AgreedLine is what a held rank that prints its report only at its end (a
// C world host, EnvHold) prints once it has agreed.
const AgreedLine = "agreed"

// EnvHold, set to 1, asks nrtabi_bootstrap_world (runtime/libnrt) to hold
// its agreed world up, as LaunchHeld sets it.
const EnvHold = "NRTABI_WORLD_HOLD"

// holdLineMax bounds the start line a rank reads from its stdin.
const holdLineMax = 64

// Hold is a rank's side of the two holds, reading its stdin.
type Hold struct {
	started, ended chan struct{}
	err            error // set before started is closed
}

// NewHold reads r in the background: its first line releases the start
// (it must be HoldGo; end of input also releases it, and the end), its
// end of input releases the end.
func NewHold(r io.Reader) *Hold {
	h := &Hold{started: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(h.ended)
		br := bufio.NewReaderSize(io.LimitReader(r, 1<<20), holdLineMax)
		line, err := br.ReadSlice('\n')
		switch {
		case err == nil && string(line) == HoldGo+"\n":
		case err == io.EOF && len(line) == 0:
		default:
			h.err = fmt.Errorf("the launcher's start line on stdin is \"%s\", not %q", cfmt.Escape(line, 32), HoldGo)
		}
		close(h.started)
		if err == nil {
			_, _ = io.Copy(io.Discard, br)
		}
	}()
	return h
}

// Start waits for the launcher's start line.
func (h *Hold) Start(ctx context.Context) error {
	select {
	case <-h.started:
		return h.err
	case <-ctx.Done():
		return fmt.Errorf("cancelled while held before the start: %w", context.Cause(ctx))
	}
}

// End waits, at most bound, for the launcher to release the rank after its
// report: a launcher that never does costs the rank bound, not a hang.
func (h *Hold) End(ctx context.Context, bound time.Duration) error {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-h.ended:
		return nil
	case <-t.C:
		return fmt.Errorf("the launcher did not release this rank within %s of its report", bound)
	case <-ctx.Done():
		return fmt.Errorf("cancelled while held after the report: %w", context.Cause(ctx))
	}
}

// ReleaseHolds is a launcher's side of the holds of n ranks, whose stdin
// pipes are holds: once n have sent on ready, the start line to each (no
// ready: no start line); then, once n have sent on settled (a rank's word
// that it agreed, or its end; no settled: at once), every pipe closed. A
// world that ctx ends is released at once. The channel returned is closed
// once the pipes are.
func ReleaseHolds(ctx context.Context, holds []io.WriteCloser, ready, settled <-chan struct{}, n int) <-chan struct{} {
	wait := func(ch <-chan struct{}) bool {
		for range n {
			select {
			case <-ch:
			case <-ctx.Done(): // the ranks were killed
				return false
			}
		}
		return true
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		defer func() {
			for _, h := range holds {
				h.Close()
			}
		}()
		if ready != nil {
			if !wait(ready) {
				return
			}
			for _, h := range holds {
				// A rank that has ended takes no line; its pipe is closed below.
				_, _ = io.WriteString(h, HoldGo+"\n")
			}
		}
		if settled != nil {
			wait(settled)
		}
	}()
	return released
}
