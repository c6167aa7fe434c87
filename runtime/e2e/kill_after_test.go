package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// checker is what checkKilled reports to: a test, or a planted fault's
// record of what it would have reported.
type checker interface {
	Helper()
	Errorf(format string, a ...any)
}

// faultRecord keeps what a check reports: the planted-fault tests show the
// check catching the fault.
type faultRecord struct{ errs []string }

func (f *faultRecord) Helper() {}
func (f *faultRecord) Errorf(format string, a ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, a...))
}

// killedNamed matches an error naming rank dead, its loopback address and
// a ring phase with its step, in either form a rank writes it: its own
// fault ("flat ring all-gather, step 6: rank 3 (127.0.0.1:40211) failed")
// or an abort it heard ("rank 3 (127.0.0.1:40211) went in the flat ring
// all-gather, step 6").
func killedNamed(dead int) *regexp.Regexp {
	var phases []string
	for _, p := range []uint32{abi.BootstrapPhaseFlatRing, abi.BootstrapPhaseIntraRing, abi.BootstrapPhaseInterRing, abi.BootstrapPhaseDown, abi.BootstrapPhasePeer} {
		phases = append(phases, regexp.QuoteMeta(tcp.PhaseName(p)))
	}
	ph := "(" + strings.Join(phases, "|") + ")"
	who := fmt.Sprintf(`rank %d \(127\.0\.0\.1:\d+\)`, dead)
	return regexp.MustCompile(ph + `, step -?\d+: ` + who + `|` + who + ` went[^\n]* in the ` + ph + `[^\n]*, step -?\d+`)
}

// checkKilled holds a world one of whose ranks was killed mid-gather to
// docs/bootstrap-hierarchy.md#abort-frames: every other rank exits
// non-zero, names the dead rank, its address and the phase, and the last
// of them fails within 2 s of the first (the dead rank's successor, at
// once: the kill's own moment).
func checkKilled(t checker, ms []member, runs []worldprog.Run, dead int) {
	t.Helper()
	named := killedNamed(dead)
	var first, last int64
	lastRank := -1
	for r, run := range runs {
		if r == dead {
			continue
		}
		if run.Exit == 0 {
			t.Errorf("rank %d (go=%v) exited 0 although rank %d was killed: %s", r, ms[r].goRank, dead, run.Fields["line"])
		}
		if !named.MatchString(run.Fields["error"] + "\n" + run.Stderr) {
			t.Errorf("rank %d (go=%v) does not name rank %d, its address and the phase:\n%s", r, ms[r].goRank, dead, run.Stderr)
		}
		done, err := strconv.ParseInt(run.Fields["t_done"], 10, 64)
		if err != nil || done == 0 {
			t.Errorf("rank %d (go=%v) reported no t_done: %s", r, ms[r].goRank, run.Fields["line"])
			continue
		}
		if first == 0 || done < first {
			first = done
		}
		if done > last {
			last, lastRank = done, r
		}
	}
	if spread := time.Duration(last - first); spread > 2*time.Second {
		t.Errorf("the last rank, %d (go=%v), failed %s after the first, more than 2 s:\n%s", lastRank, ms[lastRank].goRank, spread, runs[lastRank].Stderr)
	}
}

// spread is the time from the first rank's failure to the last's.
func spread(runs []worldprog.Run, dead int) time.Duration {
	var first, last int64
	for r, run := range runs {
		done, _ := strconv.ParseInt(run.Fields["t_done"], 10, 64)
		if r == dead || done == 0 {
			continue
		}
		if first == 0 || done < first {
			first = done
		}
		last = max(last, done)
	}
	return time.Duration(last - first)
}

// killedLate is a world whose Go rank dead is killed before the last step
// of the peer-record all-gather (die-at-step-N, N its last step: n-2 one
// way round, the forward-only ceil((n-1)/2)-1 both ways) of a flat ring:
// every rank but its successor completes the gather and is in its next
// phase (the replica group's init) when the death is found, so each must
// hear the abort there, on its ring links, within 2 s and not at the
// socket timeout (seconds; the tests give the default). deaf, if >= 0, is a
// Go rank given the planted fault deaf-after-gather.
func killedLate(t *testing.T, ms []member, dead, deaf, step, timeout int, env ...string) []worldprog.Run {
	t.Helper()
	for r := range ms {
		ms[r].timing = true
		if !ms[r].goRank {
			ms[r].lib = "faults"
		}
	}
	ms[dead].env = []string{"NRTABI_BOOTSTRAP_FAULT=die-at-step-" + strconv.Itoa(step)}
	if deaf >= 0 {
		ms[deaf].env = []string{"NRTABI_BOOTSTRAP_FAULT=deaf-after-gather"}
	}
	env = append(env, abi.EnvSockTimeout+"="+strconv.Itoa(timeout))
	runs, _ := runWorld(t, ms, env...)
	return runs
}

// TestRankKilledAfterOthersGathered: see killedLate; Go worlds in both
// framings, one way and both ways round, one root and two, and mixed Go/C
// worlds in both framings (a C rank past its gather tells the world how its
// point-to-point exchange failed: docs/bootstrap-hierarchy.md#abort-frames).
// Cost: six worlds of 8 processes, under 1 s each once built.
func TestRankKilledAfterOthersGathered(t *testing.T) {
	requireHierWorld(t)
	const n, dead = 8, 2
	for _, c := range []struct {
		name    string
		mixed   bool
		framing string
		roots   int
		bidir   bool
	}{{"go", false, "default", 1, false}, {"go", false, "extended", 1, false}, {"go-bidir", false, "default", 1, true},
		{"go-multiroot", false, "default", 2, false}, {"mixed", true, "default", 1, false}, {"mixed", true, "extended", 1, false}} {
		t.Run(c.name+"/"+c.framing, func(t *testing.T) {
			ms := make([]member, n)
			for r := range ms {
				ms[r].goRank = !c.mixed || r%2 == 0
			}
			env, step := []string{framingEnv(c.framing)}, n-2
			if c.bidir {
				env, step = append(env, abi.EnvBootstrapRing+"=bidirectional"), n/2-1
			}
			var runs []worldprog.Run
			if c.roots > 1 {
				roots, root := scaleRoots(t, c.roots)
				for r := range ms {
					ms[r].timing = true
					if !ms[r].goRank {
						ms[r].lib = "faults"
					}
				}
				ms[dead].env = []string{"NRTABI_BOOTSTRAP_FAULT=die-at-step-" + strconv.Itoa(n-2)}
				runs, _ = runWorldAt(t, root, ms, append(env, roots, abi.EnvSockTimeout+"="+strconv.Itoa(int(abi.BootstrapSockTimeoutDefault)))...)
			} else {
				runs = killedLate(t, ms, dead, -1, step, int(abi.BootstrapSockTimeoutDefault), env...)
			}
			checkKilled(t, ms, runs, dead)
			if testing.Verbose() {
				for r, run := range runs {
					t.Logf("rank %d: exit %d %s\n%s", r, run.Exit, run.Fields["line"], run.Stderr)
				}
			}
			t.Logf("rank %d killed before its last step: every other rank failed within %s of the first", dead, spread(runs, dead))
		})
	}
}

// TestDeafRankMissesTheBound is the planted fault: in the same world a Go
// rank past its gather that does not watch its ring links
// (deaf-after-gather) fails only at its next phase's timeout, and
// checkKilled catches it. Cost: one world of 8, about 5 s (the deaf rank
// waits out its socket timeout).
func TestDeafRankMissesTheBound(t *testing.T) {
	requireHierWorld(t)
	const n, dead, deaf = 8, 2, 6
	ms := make([]member, n)
	for r := range ms {
		ms[r].goRank = true
	}
	// A socket timeout of 5 s is past the 2 s bound by far and keeps
	// the test short; the deaf rank and those it leaves untold wait it out.
	runs := killedLate(t, ms, dead, deaf, n-2, 5, framingEnv("default"))
	rec := &faultRecord{}
	checkKilled(rec, ms, runs, dead)
	if len(rec.errs) == 0 {
		t.Fatalf("a rank deaf to the abort after its gather passed the check: %s", runs[deaf].Fields["line"])
	}
	t.Logf("caught: %s", strings.Join(rec.errs, "; "))
}
