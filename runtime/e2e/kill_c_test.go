package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// TestKillCRankMidGather: one C rank of a world of C hosts is killed
// (SIGKILL from the faults build's kill-mid-gather hook, after its first
// step of initTransportRank AllGather1), flat and hierarchical, both ring
// modes, in both framings. Every other rank exits non-zero within 2 s of the first one to
// notice, and each names the dead rank, its address and the phase
// (docs/bootstrap-hierarchy.md#abort-frames): its ring neighbours from the EOF,
// the rest from the ABORT they pass on. The socket timeout is the default (30 s), so a
// rank that waited for it instead would miss the bound by far. Cost: eight
// worlds of 8 processes, under 1 s each once built.
func TestKillCRankMidGather(t *testing.T) {
	requireHierWorld(t)
	const n = 8
	for _, c := range []struct {
		name string
		dead int
		l    int // 0: flat
		ring string
	}{{"flat", 3, 0, "unidirectional"}, {"flat", 3, 0, "bidirectional"}, {"hier-leader", 4, 4, "bidirectional"}, {"hier-nonleader", 6, 4, "unidirectional"}} {
		for _, framing := range []string{"default", "extended"} {
			t.Run(c.name+"/"+c.ring+"/"+framing, func(t *testing.T) {
				ms := cHosts(n)
				for r := range ms {
					ms[r].lib = "faults"
				}
				ms[c.dead].env = []string{"NRTABI_NCCOM_FAULT=kill-mid-gather"}
				env := []string{framingEnv(framing), abi.EnvSockTimeout + "=" + strconv.Itoa(int(abi.BootstrapSockTimeoutDefault)), abi.EnvBootstrapRing + "=" + c.ring}
				if c.l > 0 {
					env = append(env, envPerInstance+"="+strconv.Itoa(c.l))
				}
				runs, took := runWorld(t, ms, env...)
				if took > 10*time.Second {
					t.Errorf("the world took %s to fail: someone waited for a timeout", took)
				}
				// A far rank of a both-ways ring can finish its gather
				// without the dead rank and meet the death first in its
				// point-to-point exchange: it names that phase, step -1
				// (docs/bootstrap-hierarchy.md#abort-frames).
				named := regexp.MustCompile(fmt.Sprintf(`rank %d \(127\.0\.0\.1:\d+\) went[^\n]* in the (flat ring|intra ring|inter ring|down phase|point-to-point send / receive after the gather)[^\n]*, step -?\d+`, c.dead))
				var first, last int64
				for r, run := range runs {
					if r == c.dead {
						if run.Exit == 0 {
							t.Errorf("the killed rank %d exited 0", r)
						}
						continue
					}
					if run.Exit == 0 {
						t.Errorf("rank %d exited 0: %s", r, run.Fields["line"])
					}
					if !named.MatchString(run.Stderr) {
						t.Errorf("rank %d does not name rank %d, its address and the phase:\n%s", r, c.dead, run.Stderr)
					}
					done, err := strconv.ParseInt(run.Fields["t_done"], 10, 64)
					if err != nil || done == 0 {
						t.Errorf("rank %d reported no t_done: %s", r, run.Fields["line"])
						continue
					}
					if first == 0 || done < first {
						first = done
					}
					last = max(last, done)
				}
				if spread := time.Duration(last - first); spread > 2*time.Second {
					t.Errorf("the last rank failed %s after the first, more than 2 s", spread)
				} else {
					t.Logf("rank %d killed: every other rank failed within %s of the first, world %s", c.dead, spread, took)
				}
			})
		}
	}
}
