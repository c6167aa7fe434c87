package tcp

import (
	"net"
	"syscall"
	"testing"
)

// socketProtocol is SO_PROTOCOL of ln's socket: IPPROTO_TCP (6), or
// IPPROTO_MPTCP (262) for a Multipath TCP one.
func socketProtocol(t *testing.T, ln *net.TCPListener) int {
	t.Helper()
	rc, err := ln.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var p int
	var perr error
	if err := rc.Control(func(fd uintptr) { p, perr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_PROTOCOL) }); err != nil || perr != nil {
		t.Fatalf("getsockopt SO_PROTOCOL: %v %v", err, perr)
	}
	return p
}

const ipprotoMPTCP = 262

// TestListenPlainIsTCP: the ranks' and the roots' listeners are plain TCP
// sockets (ListenPlain), not the Multipath TCP ones Go asks for by
// default. The planted fault is Go's default listener, which on a kernel
// with MPTCP enabled is caught as one.
func TestListenPlainIsTCP(t *testing.T) {
	ln, err := ListenPlain(loopAny)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if p := socketProtocol(t, ln); p != syscall.IPPROTO_TCP {
		t.Errorf("ListenPlain's socket has protocol %d, want IPPROTO_TCP (%d)", p, syscall.IPPROTO_TCP)
	}
	def, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(loopAny))
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	if p := socketProtocol(t, def); p != ipprotoMPTCP {
		t.Skipf("Go's default listener here has protocol %d, not MPTCP (net.mptcp.enabled off, or no MPTCP in this kernel): the planted fault cannot be shown", p)
	}
}
