package tcp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// nextPhase is what a rank does after its bootstrap in these tests: it
// waits, as a rank waits in its next phase (a replica group's root, a
// signature), for up to its socket timeout, under the endpoint's context.
// A world that fails after the rank's gather must end that wait with the
// failure, at once.
func nextPhase(timeout time.Duration) func(int, *Endpoint) error {
	return func(_ int, e *Endpoint) error {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-e.Context().Done():
			return fmt.Errorf("the next phase: %w", context.Cause(e.Context()))
		case <-t.C:
			return nil // the next phase timed out: not told
		}
	}
}

// deathAfterGather is a rank dying before the last step of the
// peer-record all-gather of a one-way ring: only its successor still
// needs a frame from it, so every other rank completes its gather and is
// in its next phase when the death is found. Those ranks must hear it on
// their ring links (watch.go) and fail within 2 s, naming the dead rank,
// its address and the phase; the successor fails in its gather and
// starts the abort round the ring.
var deathAfterGather = []struct {
	name       string
	n, r, l    int
	ext, bidir bool
	dead       int
	phase      uint32
	step       int
}{
	{"flat", 8, 1, 0, false, false, 3, abi.BootstrapPhaseFlatRing, 6},
	{"flat extended", 8, 1, 0, true, false, 3, abi.BootstrapPhaseFlatRing, 6},
	// Both ways round the last of ceil((n-1)/2) steps runs forward only.
	{"flat bidir", 8, 1, 0, false, true, 3, abi.BootstrapPhaseFlatRing, 3},
	{"multi-root flat", 12, 3, 0, false, false, 5, abi.BootstrapPhaseFlatRing, 10},
	{"hier leaders", 16, 1, 2, false, false, 4, abi.BootstrapPhaseInterRing, 6},
}

// TestRankDiesAfterOthersGathered: see deathAfterGather. A non-leader
// dying in its intra ring is not a row: its abort outruns the other
// instances' leaders' ring, so whether any rank is past its gather is a
// race (TestRankDiesMidGather has it mid-gather). Cost: five
// worlds of 8-16 in-process ranks, well under 1 s each.
func TestRankDiesAfterOthersGathered(t *testing.T) {
	for _, c := range deathAfterGather {
		t.Run(c.name, func(t *testing.T) {
			d, w := dieAfterGather(t, c.n, c.r, c.l, c.ext, c.bidir, c.dead, c.phase, c.step, -1)
			checkDeath(t, d, w.errs, w.ended)
			done := 0
			for r, g := range w.gathered {
				if g && r != c.dead {
					done++
				}
			}
			// The case is only one if ranks were past their gather.
			if done == 0 {
				t.Fatalf("no rank completed its gather before the death was found: the watch was not exercised")
			}
			t.Logf("%d of %d surviving ranks had completed their gather and heard of the death in their next phase", done, c.n-1)
		})
	}
}

// TestDeafRankCaught is the planted fault: one rank past its gather that
// does not watch its ring (Hooks.Deaf) sits out its next phase to the
// timeout, and checkDeath catches it.
func TestDeafRankCaught(t *testing.T) {
	c := deathAfterGather[0]
	deaf := (c.dead + 3) % c.n // past its gather: not the dead rank's successor
	d, w := dieAfterGather(t, c.n, c.r, c.l, c.ext, c.bidir, c.dead, c.phase, c.step, deaf)
	if !w.gathered[deaf] {
		t.Fatalf("the deaf rank %d did not complete its gather: %v", deaf, w.errs[deaf])
	}
	ft := &fakeT{}
	checkDeath(ft, d, w.errs, w.ended)
	if len(ft.errs) == 0 {
		t.Fatalf("a rank that ignores the abort after its gather passed the check (its error: %v)", w.errs[deaf])
	}
	t.Logf("caught: %s", ft.errs[0])
}

func dieAfterGather(t *testing.T, n, r, l int, ext, bidir bool, dead int, phase uint32, step, deaf int) (*dieAt, *scaleWorld) {
	d := &dieAt{dead: dead, phase: phase, step: step}
	timeout := DefaultTimeout
	if deaf >= 0 {
		timeout = abortWithin + time.Second // the deaf rank waits it out, past the bound
	}
	w := &scaleWorld{n: n, r: r, l: l, bidir: bidir, timeout: timeout, next: nextPhase(timeout), cfg: func(rank int, cf *Config) {
		cf.Extended = ext
		d.hook(rank, cf)
		if rank == deaf {
			cf.Hooks = &Hooks{Deaf: true}
		}
	}}
	if ext {
		w.rootCfg = func(_ int, cf *Config) { cf.Extended = true }
	}
	runWorld(t, w)
	return d, w
}

// fakeT keeps what a check reports instead of failing the test: the
// planted-fault tests show the check catching the fault.
type fakeT struct{ errs []string }

func (f *fakeT) Helper()                        {}
func (f *fakeT) Errorf(format string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(format, a...)) }
func (f *fakeT) Fatalf(format string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(format, a...)) }
