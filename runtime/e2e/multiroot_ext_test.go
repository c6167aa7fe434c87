package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// TestMultiRootExtendedWorlds: the extended framing with several roots
// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring), one wire on
// both sides: C hosts alone, then Go and C ranks alternating with the
// roots served on either side (the first rank of each range serves its
// root, so the ranges mix Go and C roots), flat and hierarchical. Every
// rank agrees on one peer table. Cost: six worlds of 8-10 processes,
// under a second each once built.
func TestMultiRootExtendedWorlds(t *testing.T) {
	requireHierWorld(t)
	for _, c := range []struct {
		n, l, r int
		mix     string // "c": C hosts only; "go-root", "c-root": mixed, rank 0 of that side
	}{{8, 0, 2, "c"}, {10, 4, 3, "c"}, {8, 0, 3, "go-root"}, {8, 0, 2, "c-root"}, {10, 4, 2, "go-root"}, {10, 4, 3, "c-root"}} {
		t.Run(fmt.Sprintf("n%d-l%d-r%d-%s", c.n, c.l, c.r, c.mix), func(t *testing.T) {
			roots, root := scaleRoots(t, c.r)
			env := []string{roots, framingEnv("extended"), "NRTABI_LOG_LEVEL=info"}
			kind := "flat"
			if c.l > 0 {
				env = append(env, envPerInstance+"="+strconv.Itoa(c.l))
				kind = "hierarchical"
			}
			ms := cHosts(c.n)
			if c.mix != "c" {
				ms = mixedHier(c.n, c.mix == "go-root")
			}
			runs, took := runWorldAt(t, root, ms, env...)
			agree(t, runs)
			sameScaleTables(t, ms, runs, kind)
			t.Logf("%d ranks (%s), %d roots, extended framing: agreed in %s", c.n, c.mix, c.r, took)
		})
	}
}

// TestMultiRootExtendedRankDies: in the extended framing with two roots
// (8 ranks, L = 2: root 0 serves 0..3, root 1 4..7), a non-leader of root
// 1's range dies in the bootstrap's own gather, while the roots still wait
// for RING_DONE, under the default socket timeout; every other rank of
// both ranges exits non-zero within 2 s naming the dead rank, its address
// and the phase. A C rank (die-nonleader, at the gather's start): its
// leader sees it go on the intra ring and the ring aborts name it
// (checkKilled). A Go rank (die-mid-gather, past its intra ring, at the
// leaders' phase): no ring link of a live rank waits on it, so only its
// root connection's end tells, and root 0's ranks hear it from root 0,
// told by root 1 (checkToldByRoots), by its listen address and phase.
// Cost: two worlds of 8 processes, under 1 s each once built. (TestScaleMixedCRankDies's own case, a C
// rank killed in the peer-record gather, has C ranks name the Go rank
// beside them in the extended framing with one root as with two: a gap of
// the mixed ranks, not of the roots, named in the report of 2026-12-04.)
func TestMultiRootExtendedRankDies(t *testing.T) {
	requireHierWorld(t)
	const n, dead = 8, 5
	for _, c := range []struct {
		name   string
		goRoot bool // rank 0 is a Go rank, the odd ranks C
		l      int
		fault  string
		byRoot bool // only the roots can tell: see checkToldByRoots
	}{{"hier-c-dies-in-addresses", true, 2, "NRTABI_NCCOM_FAULT=die-nonleader", false},
		{"hier-go-dies-in-addresses", false, 2, "NRTABI_BOOTSTRAP_FAULT=die-mid-gather", true}} {
		t.Run(c.name, func(t *testing.T) {
			roots, root := scaleRoots(t, 2)
			ms := mixedHier(n, c.goRoot)
			for r := range ms {
				ms[r].timing = true
				if !ms[r].goRank {
					ms[r].lib = "faults"
				}
			}
			ms[dead].env = []string{c.fault}
			env := []string{roots, framingEnv("extended"), abi.EnvSockTimeout + "=" + strconv.Itoa(int(abi.BootstrapSockTimeoutDefault))}
			if c.l > 0 {
				env = append(env, envPerInstance+"="+strconv.Itoa(c.l))
			}
			runs, _ := runWorldAt(t, root, ms, env...)
			if c.byRoot {
				checkToldByRoots(t, ms, runs, dead)
			} else {
				checkKilled(t, ms, runs, dead)
			}
			t.Logf("rank %d (go=%v) killed: every other rank failed within %s of the first", dead, ms[dead].goRank, spread(runs, dead))
		})
	}
}

// checkToldByRoots holds a world whose rank dead went where its root
// connection's end may tell first: every other rank exits non-zero within
// 2 s of the first, naming the dead rank, the address its peers dial and
// the phase as the roots do (docs/bootstrap-hierarchy.md#a-rank-that-hangs-up-on-its-root:
// its record's listen address, in the all-gather before its RING_DONE),
// or as checkKilled wants (a ring abort that won the race: the ring phase
// and step).
func checkToldByRoots(t *testing.T, ms []member, runs []worldprog.Run, dead int) {
	t.Helper()
	named := regexp.MustCompile(fmt.Sprintf(`peer 127\.0\.0\.1:\d+ rank %d \(listening on 127\.0\.0\.1:\d+, after its INFO_FROM_ROOT went out, before its RING_DONE\) closed its root connection before the world was complete|`, dead) + killedNamed(dead).String())
	for r, run := range runs {
		if r == dead {
			continue
		}
		if run.Exit == 0 {
			t.Errorf("rank %d (go=%v) exited 0 although rank %d died: %s", r, ms[r].goRank, dead, run.Fields["line"])
		}
		if !named.MatchString(run.Fields["error"] + "\n" + run.Stderr) {
			t.Errorf("rank %d (go=%v) does not name rank %d and its address as its root told it:\n%s", r, ms[r].goRank, dead, run.Stderr)
		}
	}
	if d := spread(runs, dead); d > 2*time.Second {
		t.Errorf("the last rank failed %s after the first, more than 2 s", d)
	}
}
