package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// scaleRoots is NRTABI_BOOTSTRAP_ROOTS for r roots on free loopback ports,
// root 0 at the world's root id, and that id.
func scaleRoots(t *testing.T, r int) (string, string) {
	t.Helper()
	list := make([]string, r)
	for i := range list {
		a, err := worldprog.FreeLoopbackRoot()
		if err != nil {
			t.Fatal(err)
		}
		list[i] = a
	}
	return abi.EnvBootstrapRoots + "=" + strings.Join(list, ","), list[0]
}

// sameScaleTables checks that the Go ranks (table=) and the C ranks
// (libnccom's "gathered tables" line, of the kind wanted) gathered one
// peer table.
func sameScaleTables(t *testing.T, ms []member, runs []worldprog.Run, kind string) {
	t.Helper()
	want := ""
	for r, run := range runs {
		got := run.Fields["table"]
		if !ms[r].goRank {
			m := tablesRE.FindStringSubmatch(run.Stderr)
			if m == nil || m[3] != kind {
				t.Errorf("C rank %d logged no %s gather:\n%s", r, kind, run.Stderr)
				continue
			}
			got = m[2]
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Errorf("rank %d (go=%v) gathered peer table %s, another rank %s", r, ms[r].goRank, got, want)
		}
	}
}

// TestScaleMixedWorlds: Go and C ranks alternating in one multi-root world
// (docs/bootstrap-hierarchy.md#wire-at-scale), the roots served on both
// sides, flat and hierarchical, one and both ways round: every rank agrees
// on one peer table. Cost: eight worlds of 8-12 processes.
func TestScaleMixedWorlds(t *testing.T) {
	requireHierWorld(t)
	for _, c := range []struct{ n, l, r int }{{8, 0, 3}, {12, 4, 3}} {
		for _, ring := range []string{"unidirectional", "bidirectional"} {
			for _, goRoot := range []bool{true, false} {
				t.Run(fmt.Sprintf("n%d-l%d-r%d-%s-go-root=%v", c.n, c.l, c.r, ring, goRoot), func(t *testing.T) {
					roots, root := scaleRoots(t, c.r)
					env := []string{roots, abi.EnvBootstrapRing + "=" + ring, "NRTABI_LOG_LEVEL=info"}
					kind := "flat"
					if c.l > 0 {
						env = append(env, envPerInstance+"="+strconv.Itoa(c.l))
						kind = "hierarchical"
					}
					ms := mixedHier(c.n, goRoot)
					runs, took := runWorldAt(t, root, ms, env...)
					agree(t, runs)
					sameScaleTables(t, ms, runs, kind)
					t.Logf("%d mixed ranks, %d roots, %s: agreed in %s", c.n, c.r, ring, took)
				})
			}
		}
	}
}

// TestScaleMixedCRankDies: a C rank of a mixed multi-root world is killed
// mid-gather (the faults build's kill-mid-gather, after its first step):
// the Go ranks read the C ranks' abort frames, the C ranks the Go ones',
// a rank that had finished its gather hears them on its ring links in its
// next phase (docs/bootstrap-hierarchy.md#abort-frames), and under the
// default socket timeout every other rank exits non-zero within 2 s
// naming the dead rank, its address and the phase (checkKilled). In both
// framings: in the extended one the ranks' aborts are ABORT messages, and
// a Go rank writes its own on its ring links too (tcp tellRingsExtended;
// without it the C ranks beside a Go rank named that Go rank dead). Cost:
// four worlds of 8 processes, under 1 s each once built.
func TestScaleMixedCRankDies(t *testing.T) {
	requireHierWorld(t)
	const n, dead = 8, 3
	for _, ring := range []string{"unidirectional", "bidirectional", "unidirectional/extended", "bidirectional/extended"} {
		t.Run(ring, func(t *testing.T) {
			framing := "default"
			if r, ok := strings.CutSuffix(ring, "/extended"); ok {
				ring, framing = r, "extended"
			}
			roots, root := scaleRoots(t, 2)
			ms := mixedHier(n, true)
			for r := range ms {
				ms[r].timing = true
				if !ms[r].goRank {
					ms[r].lib = "faults"
				}
			}
			ms[dead].env = []string{"NRTABI_NCCOM_FAULT=kill-mid-gather"}
			runs, _ := runWorldAt(t, root, ms, roots, abi.EnvBootstrapRing+"="+ring, framingEnv(framing),
				abi.EnvSockTimeout+"="+strconv.Itoa(int(abi.BootstrapSockTimeoutDefault)))
			checkKilled(t, ms, runs, dead)
			t.Logf("C rank %d killed: every other rank failed within %s of the first", dead, spread(runs, dead))
		})
	}
}
