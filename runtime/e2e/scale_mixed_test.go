package e2e

import (
	"fmt"
	"regexp"
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
// mid-gather (the faults build's kill-mid-gather): the Go ranks read the C
// ranks' abort frames, the C ranks the Go ones', and every rank still in
// the gather names the dead rank and its address; a Go rank that had
// finished fails in the next phase (the gap of
// docs/bootstrap-hierarchy.md#abort-frames).
func TestScaleMixedCRankDies(t *testing.T) {
	requireHierWorld(t)
	const n, dead = 8, 3
	for _, ring := range []string{"unidirectional", "bidirectional"} {
		t.Run(ring, func(t *testing.T) {
			roots, root := scaleRoots(t, 2)
			// A rank that finished first waits out this timeout in
			// the next phase (below), so it is short.
			timeout := "6"
			ms := mixedHier(n, true)
			for r := range ms {
				if !ms[r].goRank {
					ms[r].lib = "faults"
				}
			}
			ms[dead].env = []string{"NRTABI_NCCOM_FAULT=kill-mid-gather"}
			runs, _ := runWorldAt(t, root, ms, roots, abi.EnvBootstrapRing+"="+ring, abi.EnvSockTimeout+"="+timeout)
			named := regexp.MustCompile(fmt.Sprintf(`rank %d \(127\.0\.0\.1:\d+\)`, dead))
			for r, run := range runs {
				if run.Exit == 0 {
					t.Errorf("rank %d (go=%v) exited 0", r, ms[r].goRank)
				}
				if r == dead || named.MatchString(run.Fields["error"]+run.Stderr) {
					continue
				}
				// A Go rank that needed no record relayed through the
				// dead rank (after its first step) holds the whole
				// table and rightly goes on; the next phase (the signature
				// validation's own root) does not yet watch the ring's
				// links, so it fails at the socket timeout without the
				// name (docs/bootstrap-hierarchy.md#abort-frames).
				if ms[r].goRank && strings.Contains(run.Fields["error"]+run.Stderr, "signature validation") {
					t.Logf("rank %d finished its gather before the death and failed in the next phase: %s", r, run.Fields["error"])
					continue
				}
				t.Errorf("rank %d (go=%v) does not name rank %d and its address:\n%s", r, ms[r].goRank, dead, run.Stderr)
			}
		})
	}
}
