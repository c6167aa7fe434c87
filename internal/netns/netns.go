// Package netns builds small virtual networks for tests: "hosts" that are
// Linux network namespaces, each with its own address on a veth plugged into
// a bridge in one more namespace. Creating them needs root; a test that
// cannot is skipped with the reason.
package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

var seq atomic.Int64

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// sweep removes the namespaces of test processes that are gone: a test
// binary killed at its deadline runs no cleanup, and its namespaces would
// stay (with their bridges and veths) until the next boot.
func sweep() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, "nrtabi-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = ip("netns", "del", name)
		}
	}
}

// Hosts builds n hosts on 10.231.7.0/24 (addresses .1 .. .n) and returns
// their namespace names and addresses; everything is removed when t ends,
// failed or not (and, by the next Hosts of any test, when the process that
// made them died without its cleanup). The subnet exists only inside the
// namespaces: each world is its own network, never the machine's.
func Hosts(t testing.TB, n int) (hosts, addrs []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: creating network namespaces needs root (CI runs this test as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: the ip command (iproute2) is not installed")
	}
	// The process and a sequence number: two worlds of one test binary
	// (parallel subtests) get distinct namespaces.
	tag := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(seq.Add(1), 10)
	sw := "nrtabi-" + tag + "-sw"
	sweep()
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
	for i := 0; i < n; i++ {
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
