package worldprog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A C world's root is rank 0's own listener, bound by its libnccom once the
// process has started, at the port its NEURON_RT_ROOT_COMM_ID names. A port
// the kernel hands out as ephemeral (what a bind of port 0 returns) can be
// handed out again, between the launcher's choice and rank 0's bind, to a
// listener or an outgoing connection of any of the world's other ranks,
// which all start at once: rank 0 then fails to listen (EADDRINUSE) and the
// world fails with it (docs/bootstrap.md#the-roots-port). So the root's port
// is taken from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), which no bind of port 0 and no connect is
// ever given; a Go world's launcher holds its listeners instead
// (runtime/launch bindRoots).

// portRangeFile is the kernel's ephemeral range; a variable for the tests.
var portRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// lowestRootPort is the lowest port a root is given: below it are the
// registered services' ports.
const lowestRootPort = 10000

// given holds the ports this process handed out already, so that two
// worlds started by one process (the tests of a package run in one) never
// share one, though the first has not bound it yet.
var given struct {
	sync.Mutex
	ports map[int]bool
}

// FreeLoopbackRoot is a root id on a loopback port that is free now and
// outside the kernel's ephemeral range, so no rank's own socket can take
// it before rank 0 binds it.
func FreeLoopbackRoot() (string, error) {
	p, err := FreeLoopbackPort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// FreeLoopbackPort is FreeLoopbackRoot's port: at random between
// lowestRootPort and the ephemeral range's first port, one that binds on
// 127.0.0.1 now and that this process has not given before.
func FreeLoopbackPort() (int, error) {
	lo, err := ephemeralLow()
	if err != nil {
		return 0, err
	}
	if lo <= lowestRootPort+256 {
		return 0, fmt.Errorf("the kernel's ephemeral ports start at %d (%s): no loopback port below them is left for a root; raise the range's first port above %d",
			lo, portRangeFile, lowestRootPort+256)
	}
	given.Lock()
	defer given.Unlock()
	if given.ports == nil {
		given.ports = map[int]bool{}
	}
	span := lo - lowestRootPort
	start := rand.IntN(span)
	for i := range span {
		p := lowestRootPort + (start+i)%span
		if given.ports[p] {
			continue
		}
		ok, err := bindable(p)
		if err != nil {
			return 0, err
		}
		if ok {
			given.ports[p] = true
			return p, nil
		}
	}
	return 0, fmt.Errorf("no loopback port between %d and %d binds (every one is in use)", lowestRootPort, lo-1)
}

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() (int, error) {
	b, err := os.ReadFile(portRangeFile)
	if err != nil {
		return 0, fmt.Errorf("reading the kernel's ephemeral port range: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, fmt.Errorf("%s: %q is not two ports", portRangeFile, strings.TrimSpace(string(b)))
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo < 1 || lo > 65535 {
		return 0, fmt.Errorf("%s: %q is not a port", portRangeFile, f[0])
	}
	return lo, nil
}

// bindable reports whether a listener can bind 127.0.0.1:p now; an error
// other than the port's being in use is returned.
func bindable(p int) (bool, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EACCES) {
			return false, nil
		}
		return false, fmt.Errorf("binding a loopback port for a root: %w", err)
	}
	return true, ln.Close()
}
