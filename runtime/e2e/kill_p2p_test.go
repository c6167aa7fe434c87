package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// diedAfterSend is a world whose rank dead is killed (SIGKILL, the faults
// builds' die-after-p2p-send: libnccom's for a C rank, the Go rank's
// NRTABI_BOOTSTRAP_FAULT hook for a Go one) just after its gather, once its
// first point-to-point message is out: its ring neighbours see only an end,
// which in the default framing is also what a neighbour that finished looks
// like, so the death is found by the ranks whose point-to-point connection
// with it ends, or whose wait for its message meets its ring link's end,
// before their own deadline, and their aborts reach the others
// (docs/bootstrap-hierarchy.md#abort-frames). deaf, if >= 0, is a rank (C
// or Go) given the planted fault deaf-after-gather.
func diedAfterSend(t *testing.T, ms []member, dead, deaf, timeout int, env ...string) []worldprog.Run {
	t.Helper()
	for r := range ms {
		ms[r].timing = true
		if !ms[r].goRank {
			ms[r].lib = "faults"
		}
	}
	fault := func(r int, kind string) []string {
		if ms[r].goRank {
			return []string{"NRTABI_BOOTSTRAP_FAULT=" + kind}
		}
		return []string{"NRTABI_NCCOM_FAULT=" + kind}
	}
	ms[dead].env = fault(dead, "die-after-p2p-send")
	if deaf >= 0 {
		ms[deaf].env = fault(deaf, "deaf-after-gather")
	}
	env = append(env, abi.EnvSockTimeout+"="+strconv.Itoa(timeout))
	runs, _ := runWorld(t, ms, env...)
	return runs
}

// TestCRankDiesAfterItsGather: see diedAfterSend; C worlds and mixed Go/C
// worlds (the odd ranks Go) in both framings, the dead rank a C one (rank 2,
// between two Go ranks in the mixed worlds: a Go rank waits on it) or, in
// the mixed worlds, a Go one (rank 3: C ranks wait on it), under the default
// socket timeout: every other rank exits non-zero within 2 s of the first,
// naming the dead rank, its address and the phase. Cost: six worlds of 8
// processes, under 1 s each once built.
func TestCRankDiesAfterItsGather(t *testing.T) {
	requireHierWorld(t)
	const n = 8
	for _, c := range []struct {
		mixed   bool
		framing string
		dead    int
	}{
		{false, "default", 2}, {false, "extended", 2},
		{true, "default", 2}, {true, "extended", 2},
		{true, "default", 3}, {true, "extended", 3},
	} {
		name := "c/" + c.framing
		if c.mixed {
			name = "mixed/" + c.framing + "/c-dies"
			if c.dead%2 == 1 {
				name = "mixed/" + c.framing + "/go-dies"
			}
		}
		t.Run(name, func(t *testing.T) {
			ms := make([]member, n)
			for r := range ms {
				ms[r].goRank = c.mixed && r%2 == 1
			}
			start := time.Now()
			runs := diedAfterSend(t, ms, c.dead, -1, int(abi.BootstrapSockTimeoutDefault), framingEnv(c.framing))
			checkKilled(t, ms, runs, c.dead)
			if t.Failed() || testing.Verbose() {
				for r, run := range runs {
					t.Logf("rank %d: exit %d %s\n%s", r, run.Exit, run.Fields["line"], run.Stderr)
				}
			}
			t.Logf("rank %d killed after its first point-to-point send: every other rank failed within %s of the first, world %s", c.dead, spread(runs, c.dead), time.Since(start))
		})
	}
}

// TestDeafCRankAfterItsGather is the planted fault: in the same C world a
// rank that neither watches its ring links nor tells anyone of its own
// failure (deaf-after-gather) leaves ranks to their timeout, and checkKilled
// catches it. Cost: one world of 8, about 5 s (the socket timeout given).
func TestDeafCRankAfterItsGather(t *testing.T) {
	requireHierWorld(t)
	const n, dead, deaf = 8, 2, 6
	ms := make([]member, n)
	runs := diedAfterSend(t, ms, dead, deaf, 5, framingEnv("default"))
	rec := &faultRecord{}
	checkKilled(rec, ms, runs, dead)
	if len(rec.errs) == 0 {
		t.Fatalf("a C rank deaf to the abort after its gather passed the check: %s", runs[deaf].Fields["line"])
	}
	t.Logf("caught: %s", strings.Join(rec.errs, "; "))
}

// TestDeafGoRankAfterItsGather is the planted fault of the mixed worlds: a
// Go rank next to the dead C rank that does not watch its ring links
// (deaf-after-gather: so it does not see the dead rank's link end while it
// waits for that rank's message) waits out its timeout, and checkKilled
// catches it. Cost: one world of 8, about 3 s (the socket timeout given).
func TestDeafGoRankAfterItsGather(t *testing.T) {
	requireHierWorld(t)
	const n, dead, deaf = 8, 2, 3
	ms := make([]member, n)
	for r := range ms {
		ms[r].goRank = r%2 == 1
	}
	runs := diedAfterSend(t, ms, dead, deaf, 3, framingEnv("default")) // 3 s: past the 2 s bound
	rec := &faultRecord{}
	checkKilled(rec, ms, runs, dead)
	if len(rec.errs) == 0 {
		t.Fatalf("a Go rank deaf to its neighbour's end after its gather passed the check: %s", runs[deaf].Fields["line"])
	}
	t.Logf("caught: %s", strings.Join(rec.errs, "; "))
}
