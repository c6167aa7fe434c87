package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
// framing, where the abort frames run) a leader or a non-leader dies
// mid-gather, Go (its die-mid-gather fault, as a leader enters the leaders'
// ring) or C (kill-mid-gather, after its first step), one and both ways
// round: under the default socket timeout every other rank, Go and C,
// exits non-zero within 2 s naming the dead rank, its address and the
// phase (checkKilled) — a Go rank whose gather had ended hears it on its
// ring links (docs/bootstrap-hierarchy.md#abort-frames). Cost: five worlds
// of 8 processes, under 1 s each once built.
func TestMixedKillMidGather(t *testing.T) {
	requireHierWorld(t)
	const n = 8
	for _, c := range []struct {
		name   string
		dead   int
		ring   string
		goRoot bool // even ranks Go (the leaders 0 and 4), else odd ones
	}{
		{"go-leader-dies", 4, "unidirectional", true}, {"go-leader-dies", 4, "bidirectional", true},
		{"c-leader-dies", 4, "unidirectional", false}, {"c-nonleader-dies", 5, "bidirectional", true},
		{"c-nonleader-dies", 6, "unidirectional", false},
	} {
		t.Run(c.name+"/"+c.ring, func(t *testing.T) {
			ms := mixedHier(n, c.goRoot)
			for r := range ms {
				ms[r].timing = true
				if !ms[r].goRank {
					ms[r].lib = "faults"
				}
			}
			if ms[c.dead].goRank {
				ms[c.dead].env = append(ms[c.dead].env, launch.EnvFault+"=die-mid-gather")
			} else {
				ms[c.dead].env = append(ms[c.dead].env, "NRTABI_NCCOM_FAULT=kill-mid-gather")
			}
			env := []string{framingEnv("default"), abi.EnvSockTimeout + "=" + strconv.Itoa(int(abi.BootstrapSockTimeoutDefault)),
				abi.EnvBootstrapRing + "=" + c.ring, fmt.Sprintf("%s=%d", envPerInstance, 4)}
			runs, took := runWorld(t, ms, env...)
			checkKilled(t, ms, runs, c.dead)
			t.Logf("rank %d died: every other rank failed within %s of the first, the world in %s", c.dead, spread(runs, c.dead), took)
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
