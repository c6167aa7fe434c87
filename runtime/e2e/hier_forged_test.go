package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/launch"
)

// TestHierMixedForgedRelay: in a world of 10 (instances of 4: 4+4+2), the
// leader of the short last instance, rank 8, is a Go rank that passes on
// forged copies of other ranks' peer records (NRTABI_BOOTSTRAP_FAULT=
// forge-relay). Its inter ring successor, the C leader rank 0, receives
// them first (rank 9's slot of the block rank 8 sends holding rank 8's
// record): the world fails, rank 0 names rank 8 as the forger, and no rank
// blames a rank whose slot was forged (docs/bootstrap-hierarchy.md#forged-relays).
// forgerRE is a "the forger is ..." naming rank 8 (the relay) alone.
var forgerRE = regexp.MustCompile(`^the forger is [^,]*\brank 8\b`)

func TestHierMixedForgedRelay(t *testing.T) {
	requireHierWorld(t)
	const n, l, forger = 10, 4, 8
	for _, framing := range []string{"default", "extended"} {
		t.Run(framing, func(t *testing.T) {
			ms := mixedHier(n, false) // rank 0, the root's and a leader, is C
			ms[forger].goRank = true
			ms[forger].env = append(ms[forger].env, launch.EnvFault+"=forge-relay")
			runs, _ := hierWorld(t, ms, l, framingEnv(framing))
			named := map[int]bool{}
			for r, run := range runs {
				text := run.Fields["error"] + run.Stderr
				if strings.Contains(text, "peer record says rank") {
					t.Errorf("rank %d (go=%v) blames the rank whose slot was forged: %s\n%s", r, ms[r].goRank, run.Fields["line"], run.Stderr)
				}
				for _, l := range strings.Split(text, "\n") {
					if i := strings.Index(l, "the forger is "); i >= 0 {
						if !forgerRE.MatchString(l[i:]) {
							t.Errorf("rank %d (go=%v) names another forger: %s", r, ms[r].goRank, l)
						}
						named[r] = true
					}
				}
			}
			if !named[0] {
				t.Errorf("the C leader rank 0, the forger's inter ring successor, does not name rank %d:\n%s", forger, runs[0].Stderr)
			}
		})
	}
}
