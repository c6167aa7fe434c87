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

// TestMultiRootCFaults plants faults in a world of 8 C hosts and 3 roots
// (ranks 0..2, 3..5, 6..7; ranks 0, 3 and 6 serve them): root 1 sends a
// range other than the rule's (the root-wrong-range hook), and a rank runs
// its rings the other way from the rest. Every rank exits non-zero, and the
// fault is named where it is seen. (A rank dialling another range's root
// is refused by name only when it reaches that root before the root has
// its own range whole; after, the root reads no more connections, so the
// test could not say which comes first.) Cost: two worlds that fail within
// the 3 s socket timeout each.
func TestMultiRootCFaults(t *testing.T) {
	requireHierWorld(t)
	const n = 8
	for _, c := range []struct {
		name  string
		at    int // the faulty rank
		env   func(roots string) []string
		saw   int // the rank whose log names it
		names string
	}{
		{"a root's range is not the rule's", 3, func(string) []string { return []string{"NRTABI_NCCOM_FAULT=root-wrong-range"} },
			6, "root 1 (peer 127.0.0.1:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			roots, root := rootsEnv(t, 3)
			ms := cHosts(n)
			for r := range ms {
				ms[r].lib = "faults"
			}
			ms[c.at].env = c.env(roots)
			runs, _ := runWorldAt(t, root, ms, roots)
			for r, run := range runs {
				if run.Exit == 0 {
					t.Errorf("rank %d exited 0: %s", r, run.Fields["line"])
				}
			}
			if !strings.Contains(runs[c.saw].Stderr, c.names) {
				t.Errorf("rank %d does not name the fault (%q):\n%s", c.saw, c.names, runs[c.saw].Stderr)
			}
		})
	}
	t.Run("a rank of the other ring mode", func(t *testing.T) {
		ms := cHosts(n)
		ms[5].env = []string{abi.EnvBootstrapRing + "=unidirectional"}
		runs, _ := runWorld(t, ms, abi.EnvBootstrapRing+"=bidirectional")
		for r, run := range runs {
			if run.Exit == 0 {
				t.Errorf("rank %d exited 0 in a world of mixed ring modes: %s", r, run.Fields["line"])
			}
		}
	})
}
