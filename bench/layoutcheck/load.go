package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/bench/benchenv"
)

// load1 is the 1-minute load average; ok false when /proc does not say.
func load1() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// group prints a section's heading and the load average before it, runs
// it, and prints the load average after it and how long it took: every
// table of the bench says what else the machine was doing.
func group(w io.Writer, title string, body func() error) error {
	fmt.Fprintf(w, "\n## %s\n\nload average before: %s (%s CPUs), %s\n\n", title, benchenv.LoadAvg(), benchenv.NProc(), time.Now().UTC().Format("15:04:05 UTC"))
	start := time.Now()
	err := body()
	fmt.Fprintf(w, "\nload average after: %s; the group took %.0f s\n", benchenv.LoadAvg(), time.Since(start).Seconds())
	return err
}

// idleRule is what the speed-up row waits for: the 1-minute load average
// under below, held for sustain, sampled every step, for at most bound.
type idleRule struct {
	below   float64
	sustain time.Duration
	bound   time.Duration
	step    time.Duration
	// decay is the load average's time constant: the kernel's 1-minute
	// load falls by at most exp(-t/decay) while nothing runs.
	decay time.Duration
}

var defaultIdle = idleRule{below: 0.3, sustain: time.Minute, bound: 3 * time.Minute, step: 5 * time.Second, decay: time.Minute}

// idleResult is what the wait saw.
type idleResult struct {
	idle   bool
	waited time.Duration
	// maxLoad is the largest 1-minute load average sampled over the
	// sustained window when idle, else over the whole wait.
	maxLoad float64
	last    float64
	// hopeless: the wait stopped early because even with nothing running
	// the load could not fall under the limit and stay there for the
	// sustain before the bound.
	hopeless bool
}

// waitIdle samples the load average until it has stayed under rule.below
// for rule.sustain, or rule.bound passes. A rule whose bound is shorter
// than its sustain can never be met, and says so by returning not idle.
func waitIdle(ctx context.Context, rule idleRule, sample func() (float64, bool)) idleResult {
	start := time.Now()
	var since time.Time // start of the current run of samples under below
	var runMax, allMax float64
	for {
		v, ok := sample()
		now := time.Now()
		if !ok {
			v = 99 // unreadable: never idle
		}
		allMax = max(allMax, v)
		if v < rule.below {
			if since.IsZero() {
				since, runMax = now, 0
			}
			runMax = max(runMax, v)
			if now.Sub(since) >= rule.sustain {
				return idleResult{idle: true, waited: now.Sub(start), maxLoad: runMax, last: v}
			}
		} else {
			since = time.Time{}
		}
		if now.Sub(start)+rule.step > rule.bound {
			return idleResult{waited: now.Sub(start), maxLoad: allMax, last: v}
		}
		// From v the load cannot be under below before decay * ln(v/below)
		// has passed, however quiet the machine.
		if left := rule.bound - now.Sub(start) - rule.sustain; rule.decay > 0 && v >= rule.below && v*math.Exp(-left.Seconds()/rule.decay.Seconds()) >= rule.below {
			return idleResult{waited: now.Sub(start), maxLoad: allMax, last: v, hopeless: true}
		}
		select {
		case <-ctx.Done():
			return idleResult{waited: time.Since(start), maxLoad: allMax, last: v}
		case <-time.After(rule.step):
		}
	}
}
