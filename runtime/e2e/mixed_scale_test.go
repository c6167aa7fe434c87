package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/launch"
)

// TestMixedBidirectionalWorlds: Go `nrtabi-runtime bootstrap` ranks and C
// hosts alternating in one world whose rings run both ways
// (NRTABI_BOOTSTRAP_RING=bidirectional), the root on either side, flat (8)
// and hierarchical (10 as 4+4+2, the down phase split both ways), both
// framings: every rank agrees, and on the hierarchical world every rank
// gathered the same peer table. Cost: eight worlds of 8-10 processes.
func TestMixedBidirectionalWorlds(t *testing.T) {
	requireHierWorld(t)
	for _, c := range []struct{ n, l int }{{8, 0}, {10, 4}} {
		for _, goRoot := range []bool{true, false} {
			for _, framing := range []string{"default", "extended"} {
				t.Run(fmt.Sprintf("n%d-l%d-go-root=%v-%s", c.n, c.l, goRoot, framing), func(t *testing.T) {
					ms := mixedHier(c.n, goRoot)
					env := []string{framingEnv(framing), abi.EnvBootstrapRing + "=bidirectional", "NRTABI_LOG_LEVEL=info"}
					if c.l > 0 {
						env = append(env, fmt.Sprintf("%s=%d", envPerInstance, c.l))
					}
					runs, took := runWorld(t, ms, env...)
					agree(t, runs)
					if c.l > 0 {
						sameMixedTables(t, ms, runs, c.l)
					}
					t.Logf("%d mixed ranks, both ways round: agreed in %s", c.n, took)
				})
			}
		}
	}
}

// TestMixedKillMidGather: in a mixed hierarchical world (8 as 4+4, default
// framing, where the abort frames run), a Go leader dies as it enters the
// leaders' ring (its die-mid-gather fault), one and both ways round: every
// other rank, the C ones included, fails well within the 20 s socket
// timeout naming the dead rank, its address and the phase. Cost: two
// worlds of 8 processes.
func TestMixedKillMidGather(t *testing.T) {
	requireHierWorld(t)
	const n = 8
	for _, c := range []struct {
		name string
		dead int
		l    int // the Go fault fires as a leader enters the leaders' ring: a hierarchical world
		ring string
	}{
		// A Go leader only: when a C rank dies, a Go rank whose gather had
		// already ended (one needing nothing more from the dead rank's side)
		// waits in point-to-point without watching its ring links, so the
		// abort neither reaches it nor goes on through it (the C side
		// watches them there: TestKillCRankMidGather).
		{"go-leader-dies", 4, 4, "unidirectional"}, {"go-leader-dies", 4, 4, "bidirectional"},
	} {
		t.Run(c.name+"/"+c.ring, func(t *testing.T) {
			ms := mixedHier(n, true) // even ranks Go, odd ranks C
			for r := range ms {
				if !ms[r].goRank {
					ms[r].lib = "faults"
				}
			}
			if ms[c.dead].goRank {
				ms[c.dead].env = append(ms[c.dead].env, launch.EnvFault+"=die-mid-gather")
			} else {
				ms[c.dead].env = append(ms[c.dead].env, "NRTABI_NCCOM_FAULT=kill-mid-gather")
			}
			env := []string{framingEnv("default"), abi.EnvSockTimeout + "=20", abi.EnvBootstrapRing + "=" + c.ring}
			if c.l > 0 {
				env = append(env, fmt.Sprintf("%s=%d", envPerInstance, c.l))
			}
			runs, took := runWorld(t, ms, env...)
			if took > 10*time.Second {
				t.Errorf("the world took %s to fail: someone waited for a timeout", took)
			}
			for r, run := range runs {
				if r == c.dead {
					continue
				}
				if run.Exit == 0 {
					t.Errorf("rank %d (go=%v) exited 0: %s", r, ms[r].goRank, run.Fields["line"])
				}
				if text := run.Fields["error"] + "\n" + run.Stderr; !namesDead(text, c.dead) {
					t.Errorf("rank %d (go=%v) does not name rank %d, its address and the phase: %s\n%s", r, ms[r].goRank, c.dead, run.Fields["line"], run.Stderr)
				}
			}
			t.Logf("rank %d died: the world failed in %s", c.dead, took)
		})
	}
}

// phaseStep is a ring phase and step as both sides name them
// (docs/bootstrap-hierarchy.md#abort-frames).
var phaseStep = regexp.MustCompile(`(flat ring|intra ring|inter ring|down phase)[^\n]*step -?\d+`)

// namesDead reports whether one line of text names rank dead with its
// loopback address and a ring phase and step: the C side's "rank D (ADDR)
// went ... in the PHASE, step S", the Go side's "PHASE, step S: rank D
// (ADDR) failed", or either's relayed abort.
func namesDead(text string, dead int) bool {
	who := regexp.MustCompile(fmt.Sprintf(`rank %d \(127\.0\.0\.1:\d+\)`, dead))
	for _, line := range strings.Split(text, "\n") {
		if who.MatchString(line) && phaseStep.MatchString(line) {
			return true
		}
	}
	return false
}
