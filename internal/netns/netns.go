// Package netns builds small virtual networks for tests: "hosts" that are
// Linux network namespaces, each with its own address on a veth plugged into
// a bridge in one more namespace. Creating them needs root; a test that
// cannot is skipped with the reason.
package netns

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Hosts builds n hosts on 10.231.7.0/24 (addresses .1 .. .n) and returns
// their namespace names and addresses; everything is removed when t ends.
func Hosts(t testing.TB, n int) (hosts, addrs []string) {
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
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
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
