package tcp

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// abortWithin is how soon every other rank must fail once a rank dies
// mid-gather (docs/bootstrap-hierarchy.md#abort-frames), under the default
// socket timeout of 30 s.
const abortWithin = 2 * time.Second

// dieAt makes rank dead die at step of phase in its second all-gather
// (the peer records, once every listen address is known), recording when
// and where it listened. A death after a rank's record has gone round may
// leave the others a complete table: they rightly succeed, so the tests
// kill at step 0.
type dieAt struct {
	dead  int
	phase uint32
	step  int

	mu    sync.Mutex
	seen  int // step-0 entries of phase: which all-gather this is
	when  time.Time
	addr  netip.AddrPort
	fired bool
}

func (d *dieAt) hook(rank int, c *Config) {
	if rank != d.dead {
		return
	}
	c.Hooks = &Hooks{RingStep: func(phase uint32, step int, me netip.AddrPort) bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		if phase == d.phase && step == 0 {
			d.seen++
		}
		if d.fired || phase != d.phase || step != d.step || d.seen != 2 {
			return false
		}
		d.fired, d.when, d.addr = true, time.Now(), me
		return true
	}}
}

// checker is what checkDeath reports to: a test, or a planted fault's
// fakeT.
type checker interface {
	Helper()
	Errorf(format string, a ...any)
	Fatalf(format string, a ...any)
}

// checkDeath holds every other rank to the requirement: an error within
// abortWithin of the death naming the dead rank, its listen address and
// the phase.
func checkDeath(t checker, d *dieAt, errs []error, ended []time.Time) {
	t.Helper()
	if !d.fired {
		t.Fatalf("rank %d never reached step %d of the %s: no death planted", d.dead, d.step, PhaseName(d.phase))
	}
	name := regexp.MustCompile(fmt.Sprintf(`rank %d \(%s\)`, d.dead, regexp.QuoteMeta(d.addr.String())))
	for r, err := range errs {
		if r == d.dead {
			continue
		}
		if err == nil {
			t.Errorf("rank %d succeeded although rank %d died mid-gather", r, d.dead)
			continue
		}
		if late := ended[r].Sub(d.when); late > abortWithin {
			t.Errorf("rank %d failed %s after the death, more than %s: %v", r, late, abortWithin, err)
		}
		text := err.Error()
		phase := false
		for _, p := range phaseNames {
			phase = phase || strings.Contains(text, p+", step ") || strings.Contains(text, "went in the "+p)
		}
		if !name.MatchString(text) || !phase {
			t.Errorf("rank %d's error does not name rank %d (%s) and a phase: %v", r, d.dead, d.addr, err)
		}
	}
}

// One rank dies mid-gather, its sockets reset as a killed process's are:
// every other rank fails within 2 s, not at the 30 s timeout, naming it,
// its address and the phase. Every framing and shape: flat and
// hierarchical in both framings, multi-root flat and hierarchical in
// both framings, one way and both ways round. Cost: about 1 s in all.
func TestRankDiesMidGather(t *testing.T) {
	for _, c := range []struct {
		name       string
		n, r, l    int
		ext, bidir bool
		dead       int
		phase      uint32
	}{
		{"flat", 12, 1, 0, false, false, 5, abi.BootstrapPhaseFlatRing},
		{"flat bidir", 12, 1, 0, false, true, 5, abi.BootstrapPhaseFlatRing},
		{"flat extended", 12, 1, 0, true, false, 5, abi.BootstrapPhaseFlatRing},
		{"hier non-leader", 12, 1, 4, false, false, 6, abi.BootstrapPhaseIntraRing},
		{"hier leader", 12, 1, 4, false, false, 4, abi.BootstrapPhaseInterRing},
		{"hier bidir", 16, 1, 4, false, true, 9, abi.BootstrapPhaseIntraRing},
		{"hier extended", 12, 1, 4, true, false, 6, abi.BootstrapPhaseIntraRing},
		{"multi-root flat", 24, 3, 0, false, false, 11, abi.BootstrapPhaseFlatRing},
		{"multi-root flat bidir", 24, 3, 0, false, true, 16, abi.BootstrapPhaseFlatRing},
		{"multi-root hier", 24, 3, 4, false, false, 13, abi.BootstrapPhaseIntraRing},
		{"multi-root extended", 12, 2, 0, true, false, 8, abi.BootstrapPhaseFlatRing},
		{"multi-root hier extended", 16, 2, 4, true, true, 9, abi.BootstrapPhaseIntraRing},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Step 0: the dead rank's record has gone nowhere, so no
			// other rank can complete the gather without it.
			d := &dieAt{dead: c.dead, phase: c.phase, step: 0}
			w := &scaleWorld{n: c.n, r: c.r, l: c.l, bidir: c.bidir, timeout: DefaultTimeout, cfg: func(rank int, cf *Config) {
				cf.Extended = c.ext
				d.hook(rank, cf)
			}}
			if c.ext {
				w.rootCfg = func(_ int, cf *Config) { cf.Extended = true }
			}
			runWorld(t, w)
			checkDeath(t, d, w.errs, w.ended)
		})
	}
}
