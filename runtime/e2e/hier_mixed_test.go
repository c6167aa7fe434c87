package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/runtime/launch"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// mixedHier is a world of n ranks alternating Go `nrtabi-runtime bootstrap`
// and C hosts (the reference libnccom through libnrt and ld.so), rank 0 —
// the root's — on the Go side when goRoot.
func mixedHier(n int, goRoot bool) []member {
	ms := make([]member, n)
	for r := range ms {
		ms[r].goRank = (r%2 == 0) == goRoot
	}
	return ms
}

// sameMixedTables checks that the Go ranks (table=, per_instance=) and the C
// ranks (libnccom's "gathered tables" line) all ran the hierarchical
// bootstrap and gathered the same 112-byte peer table: both print upstream's
// getHash of it (tcp.TableDigest).
func sameMixedTables(t *testing.T, ms []member, runs []worldprog.Run, l int) {
	t.Helper()
	for r, run := range runs {
		if ms[r].goRank && run.Fields["per_instance"] != fmt.Sprint(l) {
			t.Errorf("Go rank %d did not run the hierarchical bootstrap: %s", r, run.Fields["line"])
		}
	}
	sameScaleTables(t, ms, runs, "hierarchical")
}

// TestHierMixedWorlds: Go and C ranks form one hierarchical world (10 ranks,
// 4 per instance: instances 4+4+2, each mixing both sides), the root on
// either side, in both framings, and gather identical tables.
func TestHierMixedWorlds(t *testing.T) {
	requireHierWorld(t)
	const n, l = 10, 4
	for _, goRoot := range []bool{true, false} {
		for _, framing := range []string{"default", "extended"} {
			t.Run(fmt.Sprintf("go-root=%v-%s", goRoot, framing), func(t *testing.T) {
				ms := mixedHier(n, goRoot)
				runs, took := hierWorld(t, ms, l, framingEnv(framing))
				agree(t, runs)
				sameMixedTables(t, ms, runs, l)
				t.Logf("%d mixed ranks as instances of %d agreed in %s", n, l, took)
			})
		}
	}
}

// TestHierMixedLeaderDies: a Go leader (rank 4) is killed as it enters the
// leaders' ring, the C ranks around it included: every other rank exits
// non-zero within the timeout; in the extended framing every one names
// rank 4.
func TestHierMixedLeaderDies(t *testing.T) {
	requireHierWorld(t)
	const n, l, dead = 10, 4, 4
	for _, framing := range []string{"default", "extended"} {
		t.Run(framing, func(t *testing.T) {
			ms := mixedHier(n, true)
			ms[dead].env = append(ms[dead].env, launch.EnvFault+"=die-mid-gather")
			runs, took := hierWorld(t, ms, l, framingEnv(framing))
			if limit := time.Duration(2*worldTimeout)*time.Second + time.Second; took > limit {
				t.Errorf("the world took %s to fail, more than %s", took, limit)
			}
			named := 0
			for r, run := range runs {
				if run.Exit == 0 {
					t.Errorf("rank %d (go=%v) exited 0", r, ms[r].goRank)
				}
				if r == dead {
					continue
				}
				text := run.Fields["error"] + run.Stderr
				if strings.Contains(text, fmt.Sprintf("rank %d", dead)) {
					named++
				} else if framing == "extended" {
					t.Errorf("rank %d (go=%v) does not name rank %d: %s\n%s", r, ms[r].goRank, dead, run.Fields["line"], run.Stderr)
				}
			}
			if named == 0 {
				t.Errorf("no rank names rank %d", dead)
			}
		})
	}
}
