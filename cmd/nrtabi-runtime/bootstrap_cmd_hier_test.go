package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/runtime/launch"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// checkHierWorld checks a --local run of n ranks, l per instance, that must
// succeed: every rank's line, its intra-ring neighbours and per_instance,
// and the gathered peer-record tables compared across the processes.
func checkHierWorld(t *testing.T, res procResult, n, l int) {
	t.Helper()
	if res.exit != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.exit, res.stdout, res.stderr)
	}
	lines := rankLines(t, res.stdout, n)
	for r, f := range lines {
		prev, next := worldprog.RingNeighbours(r, n, l)
		if f["verdict"] != "ok" || f["cluster_id"] != lines[0]["cluster_id"] || f["unique_id"] != lines[0]["unique_id"] ||
			f["prev"] != strconv.Itoa(prev) || f["next"] != strconv.Itoa(next) || f["per_instance"] != strconv.Itoa(l) {
			t.Errorf("rank %d: %s (want prev=%d next=%d per_instance=%d)", r, f["line"], prev, next, l)
		}
		if f["table"] == "" || f["table"] != lines[0]["table"] {
			t.Errorf("rank %d gathered table %q, rank 0 %q", r, f["table"], lines[0]["table"])
		}
	}
	want := fmt.Sprintf("all %d ranks agree (hierarchical, %d instances of %d)", n, (n+l-1)/l, l)
	if !strings.Contains(res.stdout, want) {
		t.Errorf("no %q in:\n%s", want, res.stdout)
	}
}

// The hierarchical worlds (docs/nrtabi-runtime-bootstrap.md) as processes: 2x2, 4x8, 8x8 and uneven 10 = 4+4+2,
// in the default framing (the 4x8 in the extended one too).
func TestBootstrapHierWorlds(t *testing.T) {
	for _, c := range []struct {
		n, l int
		ext  bool
	}{{4, 2, false}, {32, 8, false}, {32, 8, true}, {64, 8, false}, {10, 4, false}} {
		t.Run(fmt.Sprintf("%dx%d extended=%v", (c.n+c.l-1)/c.l, c.l, c.ext), func(t *testing.T) {
			if testing.Short() && c.n > 32 {
				t.Skip("-short: 64 processes")
			}
			var env []string
			if c.ext {
				env = append(env, tcp.EnvFraming+"=extended")
			}
			res := nrtabi(t, env, "bootstrap", "--local", strconv.Itoa(c.n), "--per-instance", strconv.Itoa(c.l))
			checkHierWorld(t, res, c.n, c.l)
		})
	}
}

// L from the topology file ([[core]] rows: 4 in the default one) and from
// the environment; a world of at most L ranks stays flat; a bad L is
// refused by name before any rank starts.
func TestBootstrapPerInstanceSources(t *testing.T) {
	checkHierWorld(t, nrtabi(t, nil, "bootstrap", "--local", "6", "--topology", "../../runtime/device/default.toml"), 6, 4)
	checkHierWorld(t, nrtabi(t, []string{abi.EnvBootstrapPerInstance + "=3"}, "bootstrap", "--local", "7"), 7, 3)
	// The flag wins over the environment.
	checkHierWorld(t, nrtabi(t, []string{abi.EnvBootstrapPerInstance + "=3"}, "bootstrap", "--local", "6", "--per-instance", "2"), 6, 2)
	flat := nrtabi(t, nil, "bootstrap", "--local", "4", "--per-instance", "4")
	if flat.exit != 0 || !strings.Contains(flat.stdout, "all 4 ranks agree (flat)") || strings.Contains(flat.stdout, "per_instance=") {
		t.Errorf("a world of one instance is flat:\n%s", flat.stdout)
	}
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--per-instance", "0"}, "--per-instance 0: ranks per instance must be a whole number in 1..65536"},
		{nil, []string{"--per-instance", "-2"}, "--per-instance = -2: ranks per instance must be a whole number in 1..65536"},
		{nil, []string{"--per-instance", "65537"}, "--per-instance = 65537"},
		{[]string{abi.EnvBootstrapPerInstance + "=four"}, nil, abi.EnvBootstrapPerInstance + "=\"four\": ranks per instance must be a whole number"},
		{nil, []string{"--topology", "no-such.toml"}, "--topology: "},
	} {
		res := nrtabi(t, c.env, append([]string{"bootstrap", "--local", "4"}, c.args...)...)
		// A flag is a usage error; the environment's is the run's.
		if res.exit == 0 || c.env == nil && res.exit != cli.ExitUsage || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q, want %q", c.env, c.args, res.exit, res.stderr, c.want)
		}
	}
}

// TestBootstrapHierFaults plants one fault in a hierarchical world of 10
// ranks, 4 per instance (uneven: 4+4+2), in both framings. Every rank must
// exit non-zero within the socket timeout; in the extended framing every
// surviving rank's error names the fault, in the default one the ranks
// next to it do (the others see their own predecessor hang up) and the
// root's rank names it.
func TestBootstrapHierFaults(t *testing.T) {
	const n, l = 10, 4
	for _, c := range []struct {
		name   string
		rank   int
		fault  string
		flags  []string
		want   string
		killed bool
	}{
		{"leader dies mid-gather", 4, "die-mid-gather", nil, "rank 4", true},
		{"non-leader dies mid-gather", 5, "die-mid-gather", nil, "rank 5", true},
		{"last instance's leader dies", 8, "die-mid-gather", nil, "rank 8", true},
		{"rank in the wrong instance", 6, "wrong-instance", nil, "rank 6 claims instance 2, but rank 6 with per_instance 4 is in instance 1: a rank in the wrong instance", false},
		{"wrong L", 6, "", []string{"--misplace-rank", "6"}, "rank 6 reports per_instance 5, the root 4", false},
		{"skewed git hash", 9, "", []string{"--skew-rank", "9"}, "libnrt \"0000skew\"", false},
	} {
		for _, ext := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s extended=%v", c.name, ext), func(t *testing.T) {
				var env []string
				if ext {
					env = append(env, tcp.EnvFraming+"=extended")
				}
				args := append([]string{"bootstrap", "--local", strconv.Itoa(n), "--per-instance", strconv.Itoa(l)}, c.flags...)
				if c.fault != "" {
					env = append(env, launch.EnvFault+"="+c.fault)
					args = append(args, "--fault-rank", strconv.Itoa(c.rank))
				}
				res := nrtabi(t, env, args...)
				if res.exit != cli.ExitError {
					t.Fatalf("exit %d\n%s", res.exit, res.stdout)
				}
				if res.took > 2*testTimeout*time.Second {
					t.Errorf("took %s with a %ds socket timeout", res.took, testTimeout)
				}
				named := 0
				for r, f := range rankLines(t, res.stdout, n) {
					if c.killed && r == c.rank {
						continue
					}
					if f["verdict"] != "failed" {
						t.Errorf("rank %d: %s", r, f["line"])
					}
					if strings.Contains(f["error"], c.want) {
						named++
					} else if ext || r == 0 && !c.killed {
						t.Errorf("rank %d: %q lacks %q", r, f["error"], c.want)
					}
				}
				if named == 0 {
					t.Errorf("no rank names %q:\n%s", c.want, res.stdout)
				}
				if c.killed && !strings.Contains(res.stdout, fmt.Sprintf("rank %d: ended by signal: killed", c.rank)) {
					t.Errorf("the killed rank is not reported:\n%s", res.stdout)
				}
			})
		}
	}
}
