package tcp

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// dataSegsIn is tcpi_data_segs_in of c (struct tcp_info, offset 152 since
// Linux 4.6): how many segments carrying data c has received.
func dataSegsIn(t *testing.T, c net.Conn) (uint32, bool) {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info [256]byte
	n := uint32(len(info))
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&n)), 0)
	}); err != nil || errno != 0 {
		t.Fatalf("getsockopt TCP_INFO: %v %v", err, errno)
	}
	if n < 156 {
		return 0, false
	}
	return leUint32(info[152:156]), true
}

// firstSend accepts the connection send opens on ln and returns the bytes
// it carried (want of them) and how many data segments they came in.
func firstSend(t *testing.T, ln *net.TCPListener, want int, send func() error) ([]byte, uint32) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- send() }()
	_ = ln.SetDeadline(time.Now().Add(5 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, want)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	segs, ok := dataSegsIn(t, c)
	if !ok {
		t.Skip("this kernel's tcp_info has no tcpi_data_segs_in (Linux >= 4.6): the segments cannot be counted")
	}
	return got, segs
}

// TestFirstSendIsOneSegment: a point-to-point connection's opening ({rank}
// {tag} frames, or the extended HELLO) and its first message leave in one
// write, so the peer's kernel takes one data segment and the peer one
// wake-up, with exactly the bytes the three writes sent before
// (docs/benchmarks.md#the-agree-phase-s-cpu-2026-12-04). The planted
// fault is the old way, opening then message: three segments, which the
// count catches.
func TestFirstSendIsOneSegment(t *testing.T) {
	payload := []byte("seventeen bytes!!")
	for _, extended := range []bool{false, true} {
		n := testNet(t, 5*time.Second)
		if extended {
			n = testNetExt(t, 5*time.Second)
		}
		peer, err := ListenPlain(loopAny)
		if err != nil {
			t.Fatal(err)
		}
		defer peer.Close()
		own, err := ListenPlain(loopAny)
		if err != nil {
			t.Fatal(err)
		}
		e := newEndpoint(t.Context(), n, own, netip.AddrPort{}, 0, 2)
		defer e.Close()
		e.peers[1] = peer.Addr().(*net.TCPAddr).AddrPort()
		want := 4 + 4 + 4 + 4 + 4 + len(payload)
		if extended {
			want = 2*int(abi.BootstrapMsgHeaderSize) + int(abi.SizeofBootstrapPeerHello) + len(payload)
		}
		got, segs := firstSend(t, peer, want, func() error { return e.Send(1, payload) })
		if segs != 1 {
			t.Errorf("extended=%v: the first send came in %d data segments, want 1", extended, segs)
		}
		// the planted fault: the old sender's writes, each frame on its own
		old, oldSegs := firstSend(t, peer, want, func() error {
			l, err := dial(e.peers[1].String(), "rank 1", time.Second, e.st)
			if err != nil {
				return err
			}
			defer l.close()
			if extended {
				if err := e.sendHello(l, abi.BootstrapChannelPeer); err != nil {
					return err
				}
			} else {
				if err := l.sendFrame(putInt(0), "its rank"); err != nil {
					return err
				}
				if err := l.sendFrame(putInt(int(abi.BootstrapP2PTag)), "its tag"); err != nil {
					return err
				}
			}
			return e.sendOn(l, abi.BootstrapMsgPeerData, payload)
		})
		if oldSegs < 2 {
			t.Errorf("extended=%v: the opening and the message written apart came in %d data segment(s): the count would not catch a split write", extended, oldSegs)
		}
		if !bytes.Equal(got, old) {
			t.Errorf("the one write's bytes %x differ from the three writes' %x", got, old)
		}
	}
}
