package tcp

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

func hi(name string, up bool, prefixes ...string) hostInterface {
	h := hostInterface{Name: name, Up: up}
	for _, p := range prefixes {
		h.Prefixes = append(h.Prefixes, netip.MustParsePrefix(p))
	}
	return h
}

// host is a machine with loopback, a docker bridge, two NICs (one down) and
// link-local IPv6 on eth0.
var host = []hostInterface{
	hi("lo", true, "127.0.0.1/8", "::1/128"),
	hi("docker0", true, "172.17.0.1/16"),
	hi("eth0", true, "fe80::1/64", "fd00::2/64", "192.0.2.2/24"),
	hi("eth1", false, "198.51.100.2/24"),
	hi("ib0", true, "10.9.0.5/16"),
}

func TestSelectInterface(t *testing.T) {
	for _, c := range []struct {
		name, ifname, family, root string
		want                       string // "" = ErrNoInterface
	}{
		{"default skips docker and lo, IPv4 first", "", "", "", "eth0:192.0.2.2"},
		{"the root's subnet wins", "", "", "127.0.0.1", "lo:127.0.0.1"},
		{"the root's subnet wins over the default", "", "", "10.9.200.1", "ib0:10.9.0.5"},
		{"a root on no subnet falls back to the default", "", "", "203.0.113.9", "eth0:192.0.2.2"},
		{"IPv6 root", "", "", "fd00::9", "eth0:fd00::2"},
		{"family AF_INET6 skips link-local", "", "AF_INET6", "", "eth0:fd00::2"},
		{"prefix list", "ib", "", "", "ib0:10.9.0.5"},
		{"prefix list order is the interface order", "ib,docker", "", "", "docker0:172.17.0.1"},
		{"exclusions", "^eth,lo,docker", "", "", "ib0:10.9.0.5"},
		{"exact names", "=eth", "", "", ""},
		{"exact name", "=lo", "AF_INET6", "", "lo:::1"},
		{"a down interface is never used", "eth1", "", "", ""},
		{"IFNAME overrides the root's subnet", "docker", "", "127.0.0.1", "docker0:172.17.0.1"},
		{"nothing matches", "wlan", "", "", ""},
		{"family with no address", "docker", "AF_INET6", "", ""},
	} {
		fam, err := parseFamily(c.family)
		if err != nil {
			t.Fatal(err)
		}
		var root netip.Addr
		if c.root != "" {
			root = netip.MustParseAddr(c.root)
		}
		got, err := selectInterface(host, c.ifname, fam, root)
		if c.want == "" {
			if !errors.Is(err, ErrNoInterface) || err.Error() != abi.MsgNccomNoInterface {
				t.Errorf("%s: %v, %v; want %q", c.name, got, err, abi.MsgNccomNoInterface)
			}
			continue
		}
		if err != nil || got.Name+":"+got.Addr.WithZone("").String() != c.want {
			t.Errorf("%s: %v, %v; want %s", c.name, got, err, c.want)
		}
	}
	// Only lo and docker: docker before lo.
	got, err := selectInterface(host[:2], "", 0, netip.Addr{})
	if err != nil || got.Name != "docker0" {
		t.Errorf("docker then lo: %v %v", got, err)
	}
}

func TestNetInitOnThisHost(t *testing.T) {
	n := NewNet(Config{IfName: "nrtabi-no-such-if", Logger: quietLog})
	if _, err := n.Init(netip.Addr{}); err == nil || err.Error() != abi.MsgNccomNoInterface {
		t.Errorf("a missing CCOM_SOCKET_IFNAME: %v, want %q", err, abi.MsgNccomNoInterface)
	}
	n = NewNet(Config{Logger: quietLog})
	i, err := n.Init(netip.MustParseAddr("127.0.0.1"))
	if err != nil || !i.Addr.IsLoopback() {
		t.Fatalf("a loopback root picks loopback: %v %v", i, err)
	}
	// The choice is made once per process, as bootstrapNetInit's is.
	if again, _ := n.Init(netip.MustParseAddr("203.0.113.1")); again != i {
		t.Errorf("second Init chose %v after %v", again, i)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ConfigFromEnv(env(map[string]string{abi.EnvSockTimeout: "7", abi.EnvSocketIfname: "^docker", abi.EnvSocketFamily: "AF_INET6"}))
	if err != nil || c.Timeout != 7*time.Second || c.IfName != "^docker" || c.Family != "AF_INET6" {
		t.Errorf("%+v %v", c, err)
	}
	if c, err := ConfigFromEnv(env(nil)); err != nil || c.Timeout != 0 {
		t.Errorf("empty environment: %+v %v", c, err)
	}
	n := NewNet(Config{})
	if n.Timeout() != DefaultTimeout || DefaultTimeout != time.Duration(abi.BootstrapSockTimeoutDefault)*time.Second {
		t.Errorf("default timeout %s", n.Timeout())
	}
	for _, bad := range []map[string]string{{abi.EnvSockTimeout: "0"}, {abi.EnvSockTimeout: "1.5"}, {abi.EnvSockTimeout: "x"}, {abi.EnvSocketFamily: "AF_UNIX"}} {
		if _, err := ConfigFromEnv(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
