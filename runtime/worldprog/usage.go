package worldprog

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is what this process has used so far (getrusage RUSAGE_SELF, every
// thread): CPU (user + system) and its voluntary and involuntary context
// switches. A rank takes one at each phase stamp, so a bench can tell the
// bootstrap's cost from the agree phase's in CPU and wake-ups, which on a
// host of fewer cores than ranks decide the wall time
// (docs/benchmarks.md#hierarchical-bootstrap).
type Usage struct {
	CPU          time.Duration
	Nvcsw, Nivcs int64
}

// SelfUsage is this process's Usage now; the zero Usage if getrusage fails
// (it cannot for RUSAGE_SELF), which Line then omits.
func SelfUsage() Usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}
	}
	return Usage{
		CPU:   time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		Nvcsw: ru.Nvcsw, Nivcs: ru.Nivcsw,
	}
}

// text is the u_* field's value: CPU in us, then both switch counts.
func (u Usage) text() string {
	return fmt.Sprintf("%d/%d/%d", u.CPU.Microseconds(), u.Nvcsw, u.Nivcs)
}

// ParseUsage reads a u_* field of a report line (Line); ok is false for a
// field that is absent or not three non-negative integers.
func ParseUsage(s string) (Usage, bool) {
	f := strings.Split(s, "/")
	if len(f) != 3 {
		return Usage{}, false
	}
	var v [3]int64
	for i, x := range f {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n < 0 {
			return Usage{}, false
		}
		v[i] = n
	}
	return Usage{CPU: time.Duration(v[0]) * time.Microsecond, Nvcsw: v[1], Nivcs: v[2]}, true
}
