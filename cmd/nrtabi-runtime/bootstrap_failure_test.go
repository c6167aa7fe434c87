package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/runtime/launch"
)

// The failure experience of --local (docs/nrtabi-runtime-bootstrap.md#when-a-rank-fails),
// at the default 30 s socket timeout: a rank that dies is named on the
// command's first line, with its address and phase when a survivor saw
// it, and the command ends within seconds, not at the timeout.

// startLocal starts `bootstrap --local` with the default socket timeout.
func startLocal(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(nrtabiBinary(t), append([]string{"bootstrap"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, abi.EnvSockTimeout+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errw
}

// waitLocal waits at most limit for the command and returns its exit code.
func waitLocal(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running after %s", limit)
	}
	return cmd.ProcessState.ExitCode(), time.Since(start)
}

// A rank killed as it enters the leaders' phase of the gather (the fault
// hook SIGKILLs its own process): the first line is the root cause.
func TestBootstrapLocalDeadRankNamedFirst(t *testing.T) {
	cmd, out, errw := startLocal(t, []string{launch.EnvFault + "=die-mid-gather"}, "--local", "8", "--per-instance", "4", "--fault-rank", "3")
	rc, took := waitLocal(t, cmd, 20*time.Second)
	first, _, _ := strings.Cut(out.String(), "\n")
	if rc != cli.ExitError || took > 6*time.Second {
		t.Errorf("exit %d after %s, want %d within 6s", rc, took, cli.ExitError)
	}
	// Its listen address when a survivor sent to it, else the far end of
	// the connection it made; the phase is the init step, or the ring's
	// phase and step where the ranks' errors name them.
	if !regexp.MustCompile(`^bootstrap --local 8: root cause: rank 3 was ended by signal killed [0-9.]+s in, its (address|connection from) 127\.0\.0\.1:[0-9]+, during (initTransportRank AllGather1|.+, step [0-9]+) \(named by [1-7] other rank\(s\); rank [0-7]: `).MatchString(first) {
		t.Errorf("first line:\n%s\n%s", out, errw)
	}
	if !strings.Contains(errw.String(), "rank 3 was ended by signal killed") {
		t.Errorf("nothing said on stderr when rank 3 died:\n%s", errw)
	}
}

// A rank stalled before it opens any connection (the fault hook), then
// killed from outside: no peer can see it go, and the root and the others
// would wait for it until the socket timeout (30 s); the launcher names
// it, stops them after its grace and ends within seconds.
func TestBootstrapLocalKilledRankStopsTheWorld(t *testing.T) {
	cmd, out, errw := startLocal(t, []string{launch.EnvFault + "=stall-before-root"}, "--local", "8", "--fault-rank", "3")
	killRank(t, cmd.Process.Pid, 3)
	rc, took := waitLocal(t, cmd, 25*time.Second)
	first, _, _ := strings.Cut(out.String(), "\n")
	if rc != cli.ExitError || took > 8*time.Second {
		t.Errorf("exit %d after %s, want %d within 8s (the grace is 3s, the socket timeout 30s)", rc, took, cli.ExitError)
	}
	if !strings.HasPrefix(first, "bootstrap --local 8: root cause: rank 3 was ended by signal killed") {
		t.Errorf("first line %q\n%s\n%s", first, out, errw)
	}
	if !strings.Contains(out.String(), "rank 0: stopped by the launcher: still running 3s after the first failure") ||
		!strings.Contains(out.String(), "rank=0 printed nothing (stopped by the launcher)") {
		t.Errorf("the stopped ranks are not said to be:\n%s", out)
	}
	if !strings.Contains(errw.String(), "rank 3 was ended by signal killed") {
		t.Errorf("nothing said on stderr when rank 3 died:\n%s", errw)
	}
}

// A rank process killed from outside mid-gather (stalled there by the
// fault hook, alive with its sockets open, until the test's SIGKILL): the
// first line names it, with its address and the phase from its
// neighbours' errors, within seconds.
func TestBootstrapLocalKilledMidGather(t *testing.T) {
	cmd, out, errw := startLocal(t, []string{launch.EnvFault + "=stall-mid-gather"}, "--local", "8", "--per-instance", "4", "--fault-rank", "3")
	killRank(t, cmd.Process.Pid, 3)
	rc, took := waitLocal(t, cmd, 25*time.Second)
	first, _, _ := strings.Cut(out.String(), "\n")
	if rc != cli.ExitError || took > 6*time.Second {
		t.Errorf("exit %d after %s, want %d within 6s", rc, took, cli.ExitError)
	}
	if !regexp.MustCompile(`^bootstrap --local 8: root cause: rank 3 was ended by signal killed [0-9.]+s in, its (address|connection from) 127\.0\.0\.1:[0-9]+, during .+ \(named by [1-7] other rank\(s\); rank [0-7]: `).MatchString(first) {
		t.Errorf("first line:\n%s\n%s", out, errw)
	}
}

// killRank SIGKILLs rank r's process once it has run a moment (the
// others are then waiting on it).
func killRank(t *testing.T, launcher, r int) {
	t.Helper()
	victim := findRankProcess(t, launcher, r, 10*time.Second)
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// findRankProcess finds the child of launcher running rank r.
func findRankProcess(t *testing.T, launcher, r int, limit time.Duration) int {
	t.Helper()
	want := fmt.Sprintf("\x00--rank\x00%d\x00", r)
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			stat, err := os.ReadFile(filepath.Join(d, "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...: comm may hold spaces, so after the last ')'.
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(f) < 2 || f[1] != strconv.Itoa(launcher) {
				continue
			}
			cl, err := os.ReadFile(filepath.Join(d, "cmdline"))
			if err == nil && strings.Contains(string(cl), want) {
				pid, _ := strconv.Atoi(filepath.Base(d))
				return pid
			}
		}
	}
	t.Fatalf("no process of rank %d under the launcher %d after %s", r, launcher, limit)
	return 0
}

// The --local knobs that would be ignored are refused before any rank starts.
func TestBootstrapLocalKnobsRefused(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--local", "8", "--reorder-rank", "8"}, "--reorder-rank 8: the world of --local 8 has ranks 0..7"},
		{nil, []string{"--local", "8", "--skew-rank", "-2"}, "--skew-rank -2"},
		{nil, []string{"--local", "8", "--fault-rank", "2"}, "--fault-rank 2: " + launch.EnvFault + " is not set"},
		{[]string{launch.EnvFault + "=bad-magic"}, []string{"--local", "8"}, "give --fault-rank R"},
		{[]string{launch.EnvFault + "=explode"}, []string{"--local", "8", "--fault-rank", "1"}, "use bad-magic"},
		{nil, []string{"--local", "8", "--misplace-rank", "2"}, "--misplace-rank 2: the world of 8 ranks is flat"},
		{nil, []string{"--local", "8", "--rank", "2"}, "--rank with --local"},
		{[]string{abi.EnvRootCommID + "=127.0.0.1:9"}, []string{"--rank", "0", "--nranks", "2", "--skew-rank", "1"}, "--skew-rank is a --local flag"},
	} {
		res := nrtabi(t, c.env, append([]string{"bootstrap"}, c.args...)...)
		if res.exit != cli.ExitUsage || !strings.Contains(res.stderr, c.want) || strings.Contains(res.stdout, "rank=") {
			t.Errorf("%v %v: exit %d, want %d with %q\n%s%s", c.env, c.args, res.exit, cli.ExitUsage, c.want, res.stdout, res.stderr)
		}
	}
}
