package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/testbin"
	"github.com/nrtabi/nrtabi/runtime/launch"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The bootstrap tests run real nrtabi-runtime processes talking TCP. The
// binary is built once per test run, without the race detector (so that 32
// of them fit the machine) and with the test-only fault hooks
// (runtime/launch/faults.go).
var runtimeBin = testbin.New(".", "nrtabi-runtime", nil, "-tags", "nrtabi_faults,"+abi.BuildTag)

func TestMain(m *testing.M) {
	rc := m.Run()
	runtimeBin.Remove()
	os.Exit(rc)
}

func nrtabiBinary(t *testing.T) string { return runtimeBin.Path(t) }

// testTimeout is NEURON_CCOM_SOCK_TIMEOUT in these tests, in seconds.
const testTimeout = 2

type procResult struct {
	exit           int
	stdout, stderr string
	took           time.Duration
}

// nrtabi runs the binary with args and extra environment.
func nrtabi(t *testing.T, env []string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(nrtabiBinary(t), args...)
	cmd.Env = append(append(os.Environ(), abi.EnvSockTimeout+"="+strconv.Itoa(testTimeout)), env...)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	start := time.Now()
	err := cmd.Run()
	res := procResult{stdout: out.String(), stderr: errw.String(), took: time.Since(start)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return res
}

// rankLines are the per-rank lines of a --local run, by rank.
func rankLines(t *testing.T, out string, n int) []map[string]string {
	t.Helper()
	lines := make([]map[string]string, n)
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "rank=") {
			continue
		}
		f := worldprog.ParseLine(l)
		r, err := strconv.Atoi(f["rank"])
		if err != nil || r < 0 || r >= n || lines[r] != nil {
			t.Fatalf("bad or repeated rank line %q", l)
		}
		lines[r] = f
	}
	for r, f := range lines {
		if f == nil {
			t.Fatalf("no line for rank %d in:\n%s", r, out)
		}
	}
	return lines
}

func TestBootstrapLocalWorlds(t *testing.T) {
	for _, n := range []int{2, 8, 32} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			res := nrtabi(t, nil, "bootstrap", "--local", strconv.Itoa(n))
			if res.exit != 0 {
				t.Fatalf("exit %d\n%s\n%s", res.exit, res.stdout, res.stderr)
			}
			lines := rankLines(t, res.stdout, n)
			for r, f := range lines {
				if f["verdict"] != "ok" || f["cluster_id"] != lines[0]["cluster_id"] || f["unique_id"] != lines[0]["unique_id"] ||
					f["prev"] != strconv.Itoa((r+n-1)%n) || f["next"] != strconv.Itoa((r+1)%n) || f["nranks"] != strconv.Itoa(n) {
					t.Errorf("rank %d: %s", r, f["line"])
				}
			}
			// the world group's comm is split from the world by default
			// (docs/bootstrap.md#group-comm-split): rank 0's second split id
			if id := lines[0]["unique_id"]; !strings.HasPrefix(id, "split(") || !strings.HasSuffix(id, fmt.Sprintf(",n=%d,root=0,serial=2)", n)) || lines[0]["cluster_id"] == "-" {
				t.Errorf("rank 0: %s", lines[0]["line"])
			}
			if want := fmt.Sprintf("all %d ranks agree", n); !strings.Contains(res.stdout, want) {
				t.Errorf("no %q in:\n%s", want, res.stdout)
			}
		})
	}
}

func TestBootstrapOneReorderedProgramFailsEveryRank(t *testing.T) {
	const n = 8
	res := nrtabi(t, nil, "bootstrap", "--local", strconv.Itoa(n), "--reorder-rank", "5")
	if res.exit != cli.ExitError {
		t.Fatalf("exit %d, want %d\n%s", res.exit, cli.ExitError, res.stdout)
	}
	for r, f := range rankLines(t, res.stdout, n) {
		if want := cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(r)); f["verdict"] != "failed" || f["error"] != want {
			t.Errorf("rank %d: %s; want the error %q", r, f["line"], want)
		}
	}
	if !strings.Contains(res.stdout, fmt.Sprintf("%d of %d ranks exited non-zero", n, n)) {
		t.Errorf("summary:\n%s", res.stdout)
	}
}

// TestBootstrapFaults plants one misbehaving rank (2 of 4) in a real world of
// processes, in the extended framing. Every other rank must exit non-zero,
// within the socket timeout, with an error that names rank 2. (The default
// framing's faults: runtime/e2e TestBoundaryFaults.)
func TestBootstrapFaults(t *testing.T) {
	const n = 4
	for _, c := range []struct {
		fault string
		flags []string
		want  []string
	}{
		{"die-mid-record", nil, []string{"rank 2 closed the connection after 40 of 56 bytes of its INFO_TO_ROOT record"}},
		{"die-after-record", nil, []string{"rank 2 (listening on 127.0.0.1:", " INFO_FROM_ROOT", ") closed its root connection before the world was complete"}},
		{"die-after-reply", nil, []string{"rank 2"}},
		{"bad-magic", nil, []string{"rank 2: bad sanity magic 0x9e869396 in INFO_TO_ROOT", "peer 127.0.0.1:"}},
		{"truncated-record", nil, []string{"rank 2 closed the connection after 40 of 56 bytes of its INFO_TO_ROOT record", "peer 127.0.0.1:"}},
		{"", []string{"--skew-rank", "2"}, []string{"rank 2 carries nccl_nrt_git_hash libnccom \"1a31ba18\" + libnrt \"0000skew\"", "the other 3 ranks"}},
	} {
		name := c.fault
		if name == "" {
			name = "mismatched-git-hash"
		}
		t.Run(name, func(t *testing.T) {
			args := append([]string{"bootstrap", "--local", strconv.Itoa(n)}, c.flags...)
			env := []string{tcp.EnvFraming + "=extended"}
			if c.fault != "" {
				args = append(args, "--fault-rank", "2")
				env = append(env, launch.EnvFault+"="+c.fault)
			}
			res := nrtabi(t, env, args...)
			if res.exit != cli.ExitError {
				t.Fatalf("exit %d\n%s", res.exit, res.stdout)
			}
			if res.took > 2*testTimeout*time.Second {
				t.Errorf("took %s with a %ds socket timeout", res.took, testTimeout)
			}
			for r, f := range rankLines(t, res.stdout, n) {
				if r == 2 && strings.HasPrefix(c.fault, "die-") {
					continue // killed: it printed nothing
				}
				if f["verdict"] != "failed" {
					t.Errorf("rank %d: %s", r, f["line"])
				}
				if r == 2 && c.fault == "truncated-record" {
					continue // it knows what it did
				}
				for _, w := range c.want {
					if !strings.Contains(f["error"], w) {
						t.Errorf("rank %d: %q lacks %q", r, f["error"], w)
					}
				}
			}
			if strings.HasPrefix(c.fault, "die-") && !strings.Contains(res.stdout, "rank 2: ended by signal: killed") {
				t.Errorf("the killed rank is not reported:\n%s", res.stdout)
			}
		})
	}
}

// ranks starts one process per rank with its own extra environment and
// waits for all.
func ranks(t *testing.T, env [][]string, args ...[]string) []procResult {
	t.Helper()
	out := make([]procResult, len(env))
	var wg sync.WaitGroup
	for r := range env {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r] = nrtabi(t, env[r], args[r]...)
		}()
	}
	wg.Wait()
	return out
}

func TestBootstrapRankFromLaunchers(t *testing.T) {
	port := freeTestPort(t)
	root := abi.EnvRootCommID + "=127.0.0.1:" + strconv.Itoa(port)
	res := ranks(t, [][]string{
		{root, "RANK=0", "WORLD_SIZE=3"},
		{root, "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=3"},
		{root, "SLURM_PROCID=2", "SLURM_NTASKS=3", "SLURM_STEP_NUM_TASKS=3"},
	}, []string{"bootstrap"}, []string{"bootstrap"}, []string{"bootstrap"})
	for r, p := range res {
		f := worldprog.ParseLine(p.stdout)
		if p.exit != 0 || f["rank"] != strconv.Itoa(r) || f["nranks"] != "3" || f["verdict"] != "ok" {
			t.Errorf("rank %d: exit %d %q\n%s", r, p.exit, p.stdout, p.stderr)
		}
	}
}

func TestBootstrapRootPortInUse(t *testing.T) {
	// Something else holds the port and answers nothing.
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	root := abi.EnvRootCommID + "=" + hold.Addr().String()
	res := ranks(t, [][]string{{root}, {root}}, []string{"bootstrap", "--rank", "0", "--nranks", "2"}, []string{"bootstrap", "--rank", "1", "--nranks", "2"})
	if f := worldprog.ParseLine(res[0].stdout); res[0].exit != cli.ExitError ||
		!strings.Contains(f["error"], "bootstrap root cannot listen on "+hold.Addr().String()+": the port is in use by another process") {
		t.Errorf("rank 0: exit %d %q", res[0].exit, res[0].stdout)
	}
	if f := worldprog.ParseLine(res[1].stdout); res[1].exit != cli.ExitError ||
		!strings.Contains(f["error"], "nothing from the root "+hold.Addr().String()+" within 2s") {
		t.Errorf("rank 1: exit %d %q", res[1].exit, res[1].stdout)
	}
}

func TestBootstrapEnvironmentErrors(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		exit int
		want string
	}{
		{[]string{abi.EnvRootCommID + "=10.0.0.1"}, nil, cli.ExitError, cfmt.Sprintf(abi.MsgNccomInvalidCommID, "10.0.0.1")},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", abi.EnvSocketIfname + "=nrtabi-none"}, nil, cli.ExitError, abi.MsgNccomNoInterface},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", abi.EnvSockTimeout + "=soon"}, nil, cli.ExitError, abi.EnvSockTimeout + `=\"soon\"`},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9"}, []string{"--rank", "3", "--nranks", "3"}, cli.ExitUsage, cfmt.Sprintf(abi.MsgNccomInvalidRank, 3, 3)},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", "RANK=1"}, []string{}, cli.ExitUsage, "RANK=\"1\", WORLD_SIZE=\"\": both are needed"},
		{[]string{abi.EnvRootCommID + "="}, []string{"--rank", "0", "--nranks", "1"}, cli.ExitUsage, "no root comm id"},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", launch.EnvFault + "=explode"}, []string{"--rank", "0", "--nranks", "1"}, cli.ExitUsage, "use bad-magic"},
		// Timeouts that overflow a duration: once 290 ms and a silent 30 s.
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", abi.EnvSockTimeout + "=18446744074"}, nil, cli.ExitError, "whole seconds in 1..86400"},
		{[]string{abi.EnvSockTimeout + "=9223372037"}, []string{"--local", "2"}, cli.ExitError, "whole seconds in 1..86400"},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", "RANK=0", "WORLD_SIZE=100000000"}, []string{}, cli.ExitUsage, `torchrun environment: WORLD_SIZE="100000000": not a whole number in 0..65536`},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", "RANK=0", "WORLD_SIZE=0"}, []string{}, cli.ExitUsage, "torchrun environment: WORLD_SIZE = 0: a bootstrap world has 1..65536 ranks"},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", "RANK=2", "WORLD_SIZE=2"}, []string{}, cli.ExitUsage, "torchrun environment: RANK=2 is not below WORLD_SIZE=2"},
		{nil, []string{"--local", "100000000"}, cli.ExitUsage, "1..65536 ranks"},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9", tcp.EnvFraming + "=fancy"}, nil, cli.ExitError, "use upstream"},
	} {
		args := c.args
		if args == nil {
			args = []string{"--rank", "0", "--nranks", "2"}
		}
		res := nrtabi(t, c.env, append([]string{"bootstrap"}, args...)...)
		if res.exit != c.exit || !strings.Contains(res.stdout+res.stderr, c.want) {
			t.Errorf("%v %v: exit %d, want %d with %q\n%s%s", c.env, args, res.exit, c.exit, c.want, res.stdout, res.stderr)
		}
	}
}

// With nrt_get_total_vnc_count() non-zero the bootstrap opens no socket:
// the rank succeeds although no root exists.
func TestBootstrapSingleVNCGate(t *testing.T) {
	res := nrtabi(t, []string{abi.EnvRootCommID + "=127.0.0.1:9"}, "bootstrap", "--rank", "1", "--nranks", "2", "--vnc-count", "1")
	if f := worldprog.ParseLine(res.stdout); res.exit != 0 || f["verdict"] != "ok" || f["unique_id"] != "none(single-vNC)" {
		t.Errorf("exit %d %q %s", res.exit, res.stdout, res.stderr)
	}
}

// The count is the runtime's: a rank given a topology whose vnc_regime is
// single-vnc asks its device layer (nrt.BootstrapIdentity), hears a
// non-zero count and opens no socket, with no --vnc-count.
func TestBootstrapSingleVNCFromTopology(t *testing.T) {
	def, err := os.ReadFile(filepath.Join("..", "..", "runtime", "device", "default.toml"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(def), "port_remap = [1, 0, 3, 2]\n", "port_remap = [1, 0, 3, 2]\nvnc_regime = \"single-vnc\"\n", 1)
	if src == string(def) {
		t.Fatal("default.toml has no port_remap line to anchor vnc_regime on")
	}
	topo := filepath.Join(t.TempDir(), "single.toml")
	if err := os.WriteFile(topo, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res := nrtabi(t, []string{abi.EnvRootCommID + "=127.0.0.1:9"}, "bootstrap", "--rank", "1", "--nranks", "2", "--topology", topo)
	if f := worldprog.ParseLine(res.stdout); res.exit != 0 || f["verdict"] != "ok" || f["unique_id"] != "none(single-vNC)" || !strings.Contains(res.stderr, "nrt_get_total_vnc_count=4") {
		t.Errorf("exit %d %q %s", res.exit, res.stdout, res.stderr)
	}
}

// freeTestPort is a loopback port for a root (or a daemon) that the ranks
// the test starts bind themselves: from below the ephemeral range, which no
// rank's own socket is given (docs/bootstrap.md#the-roots-port).
func freeTestPort(t *testing.T) int {
	t.Helper()
	p, err := worldprog.FreeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
