package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// netnsHosts builds three "hosts" — network namespaces, each with its own
// address on a veth plugged into a bridge in a fourth namespace — and
// returns their names and addresses. It skips, saying why, when this
// process may not create namespaces.
func netnsHosts(t *testing.T) (hosts, addrs []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: creating network namespaces needs root (CI runs this test as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: the ip command (iproute2) is not installed")
	}
	tag := strconv.Itoa(os.Getpid())
	sw := "nrtabi-" + tag + "-sw"
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := ip("netns", "add", sw); err != nil {
		t.Skipf("skipped: this process may not create network namespaces: %v", err)
	}
	t.Cleanup(func() { _ = ip("netns", "del", sw) })
	must := func(args ...string) {
		t.Helper()
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	must("-n", sw, "link", "add", "br0", "type", "bridge")
	must("-n", sw, "link", "set", "br0", "up")
	for i := 0; i < 3; i++ {
		h := fmt.Sprintf("nrtabi-%s-h%d", tag, i)
		must("netns", "add", h)
		t.Cleanup(func() { _ = ip("netns", "del", h) })
		port := fmt.Sprintf("p%d", i)
		must("link", "add", "eth0", "netns", h, "type", "veth", "peer", "name", port, "netns", sw)
		must("-n", sw, "link", "set", port, "master", "br0")
		must("-n", sw, "link", "set", port, "up")
		addr := fmt.Sprintf("10.231.7.%d", i+1)
		must("-n", h, "addr", "add", addr+"/24", "dev", "eth0")
		must("-n", h, "link", "set", "eth0", "up")
		must("-n", h, "link", "set", "lo", "up")
		hosts, addrs = append(hosts, h), append(addrs, addr)
	}
	return hosts, addrs
}

// TestBootstrapAcrossThreeHosts runs one rank per namespace: each picks its
// own interface on the root's subnet, and the three agree on the world.
func TestBootstrapAcrossThreeHosts(t *testing.T) {
	hosts, addrs := netnsHosts(t)
	bin := nrtabiBinary(t)
	rootID := addrs[0] + ":29555"
	res := make([]procResult, len(hosts))
	var wg sync.WaitGroup
	for r, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("ip", "netns", "exec", h, bin, "bootstrap", "--rank", strconv.Itoa(r), "--nranks", strconv.Itoa(len(hosts)))
			cmd.Env = append(os.Environ(), abi.EnvRootCommID+"="+rootID, abi.EnvSockTimeout+"="+strconv.Itoa(testTimeout))
			var out, errw strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errw
			err := cmd.Run()
			res[r] = procResult{stdout: out.String(), stderr: errw.String()}
			if err != nil {
				res[r].exit = cmd.ProcessState.ExitCode()
			}
		}()
	}
	wg.Wait()
	first := parseRankLine(res[0].stdout)
	for r, p := range res {
		f := parseRankLine(p.stdout)
		if p.exit != 0 || f["verdict"] != "ok" {
			t.Fatalf("host %s rank %d: exit %d %q\n%s", hosts[r], r, p.exit, p.stdout, p.stderr)
		}
		if f["cluster_id"] != first["cluster_id"] || f["unique_id"] != first["unique_id"] {
			t.Errorf("rank %d disagrees: %s vs %s", r, f["line"], first["line"])
		}
		// Each host listens on its own address, chosen for the root's subnet.
		if want := fmt.Sprintf("Bootstrap : Using eth0:%s<0>", addrs[r]); !strings.Contains(p.stderr, want) {
			t.Errorf("rank %d did not log %q:\n%s", r, want, p.stderr)
		}
	}
	// The replica group's root runs beside rank 0, on host 0's address.
	if !strings.HasPrefix(first["unique_id"], addrs[0]+":") {
		t.Errorf("the agreed unique id %s is not on host 0 (%s)", first["unique_id"], addrs[0])
	}
	t.Logf("3 hosts %v agree: cluster_id %s, unique id %s", addrs, first["cluster_id"], first["unique_id"])
}
