package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// rootsEnv is NRTABI_BOOTSTRAP_ROOTS for r roots on free loopback ports,
// root 0 at the world's root id (so rank 0 serves both), and that id.
func rootsEnv(t *testing.T, r int) (string, string) {
	t.Helper()
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	list := []string{root}
	for len(list) < r {
		a, err := worldprog.FreeLoopbackRoot()
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, a)
	}
	return abi.EnvBootstrapRoots + "=" + strings.Join(list, ","), root
}

// sameGather checks that every C rank logged the gathered tables of the
// kind wanted (flat or hierarchical) with one digest.
func sameGather(t *testing.T, runs []worldprog.Run, kind string) {
	t.Helper()
	want := ""
	for r, run := range runs {
		m := tablesRE.FindStringSubmatch(run.Stderr)
		if m == nil || m[3] != kind {
			t.Errorf("rank %d logged no %s gather:\n%s", r, kind, run.Stderr)
			continue
		}
		if want == "" {
			want = m[1] + "/" + m[2]
		} else if got := m[1] + "/" + m[2]; got != want {
			t.Errorf("rank %d gathered tables %s, another rank %s", r, got, want)
		}
	}
}

// TestMultiRootCWorlds: worlds of C hosts with R roots (the first rank of
// each range serves its root, the roots joined by their ring), flat and
// hierarchical (10 ranks as 4+4+2, ranges of whole instances), both ring
// modes: every rank agrees, with one gathered table. Cost: eight worlds of
// 8-10 processes, well under a second each once built.
func TestMultiRootCWorlds(t *testing.T) {
	requireHierWorld(t)
	for _, c := range []struct {
		n, l, r int
	}{{8, 0, 2}, {8, 0, 3}, {10, 4, 2}, {10, 4, 3}} {
		for _, ring := range []string{"unidirectional", "bidirectional"} {
			t.Run(fmt.Sprintf("n%d-l%d-r%d-%s", c.n, c.l, c.r, ring), func(t *testing.T) {
				roots, root := rootsEnv(t, c.r)
				env := []string{roots, abi.EnvBootstrapRing + "=" + ring, "NRTABI_LOG_LEVEL=info"}
				kind := "flat"
				if c.l > 0 {
					env = append(env, envPerInstance+"="+strconv.Itoa(c.l))
					kind = "hierarchical"
				}
				runs, took := runWorldAt(t, root, cHosts(c.n), env...)
				agree(t, runs)
				sameGather(t, runs, kind)
				for r, run := range runs {
					if !strings.Contains(run.Stderr, fmt.Sprintf("root %d of %d)", 0, c.r)) && r == 0 {
						t.Errorf("rank 0 did not serve root 0 of %d:\n%s", c.r, run.Stderr)
					}
				}
				t.Logf("%d C hosts, %d roots, %s: agreed in %s", c.n, c.r, ring, took)
			})
		}
	}
}
