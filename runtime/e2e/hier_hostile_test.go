package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// Hostile peers against the reference libnccom's hierarchical rank side
// (hier_rank.c): a Go fake root answers a C rank's extInfoHier with a reply
// that does not fit the rank's own arithmetic, and a fake ring predecessor
// names the wrong rank or sends a block of the wrong size. Each C process
// ends within hostileBound, naming what it refused.

// sockAddr is an IPv4 TCP address in the 28-byte socketAddress layout
// (sockaddr_in: family, port in network order, the address at +4).
func sockAddr(a *net.TCPAddr) abi.NcclSocketAddress {
	var s abi.NcclSocketAddress
	s.Family = 2
	s.Port = uint16(a.Port>>8) | uint16(a.Port&0xff)<<8
	s.Flowinfo = binary.LittleEndian.Uint32(a.IP.To4())
	return s
}

// rankListen is the listen address a C rank put in its extInfoHier record.
func rankListen(rec []byte) string {
	var x abi.ExtInfo // extInfoHier begins with extInfoGlobal, which begins with extInfo
	x.UnmarshalFrom(rec)
	p := x.ExtAddressListen
	ip := make([]byte, 4)
	binary.LittleEndian.PutUint32(ip, p.Flowinfo)
	port := int(p.Port>>8) | int(p.Port&0xff)<<8
	return net.JoinHostPort(net.IP(ip).String(), strconv.Itoa(port))
}

// fakeHierRoot accepts one C rank (rank of n, L per instance), reads its
// extInfoHier and answers mk(its listen address); the connection stays
// open until the test ends.
func fakeHierRoot(t *testing.T, rank, n, L int, ext bool, mk func(listen string) abi.BootstrapRootReplyHier) (*cRank, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	env := []string{envPerInstance + "=" + strconv.Itoa(L)}
	hl := 4 // bootstrap_frame_size
	if ext {
		env = append(env, "NRTABI_BOOTSTRAP_FRAMING=extended")
		hl = int(abi.BootstrapMsgHeaderSize)
	}
	r := startRank(t, rank, n, ln.Addr().String(), "idle", 0, env...)
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rec := make([]byte, hl+abi.SizeofExtInfoHier)
	if _, err := io.ReadFull(c, rec); err != nil {
		t.Fatalf("reading the rank's extInfoHier: %v\n%s", err, r.stderr.String())
	}
	if got := int(binary.LittleEndian.Uint32(rec[hl-4:])); got != abi.SizeofExtInfoHier {
		t.Fatalf("the rank's INFO_TO_ROOT is %d bytes, want %d", got, abi.SizeofExtInfoHier)
	}
	listen := rankListen(rec[hl:])
	reply := mk(listen)
	b := make([]byte, abi.SizeofBootstrapRootReplyHier)
	reply.MarshalTo(b)
	msg := frame(b)
	if ext {
		msg = extMsg(abi.BootstrapMsgInfoFromRoot, b)
	}
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	return r, listen
}

// shape is the reply fields a rank of n with L per instance expects.
func shape(rank, n, L int) abi.BootstrapRootReplyHier {
	h := rank / L
	return abi.BootstrapRootReplyHier{ClusterID: 7, Epoch: 1, Instance: uint32(h), Ninstances: uint32((n + L - 1) / L),
		LocalRank: uint32(rank % L), LocalN: uint32(min(L, n-h*L))}
}

// TestCHierFakeRoot: a reply that places the rank elsewhere, an inter-ring
// successor given to a non-leader, and none given to a leader are each
// refused by the C rank, naming what disagrees.
func TestCHierFakeRoot(t *testing.T) {
	requirePeerHost(t)
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	somewhere := sockAddr(sink.Addr().(*net.TCPAddr))
	const n, L = 4, 2
	for _, c := range []struct {
		name string
		rank int
		mk   func() abi.BootstrapRootReplyHier
		want string
	}{
		{"another shape", 1, func() abi.BootstrapRootReplyHier {
			r := shape(1, n, L)
			r.LocalN, r.IntraNext = 3, somewhere
			return r
		}, "places it as local rank 1 of 3 in instance 0 of 2; with 2 ranks per instance (" + envPerInstance + ") it is local rank 1 of 2"},
		{"non-leader given an inter ring", 1, func() abi.BootstrapRootReplyHier {
			r := shape(1, n, L)
			r.IntraNext, r.InterNext = somewhere, somewhere
			return r
		}, "gives this rank, local rank 1 and no leader, an inter-instance successor"},
		{"leader given no inter ring", 2, func() abi.BootstrapRootReplyHier {
			r := shape(2, n, L)
			r.IntraNext = somewhere
			return r
		}, "the root gave no address (family 0) for its inter ring successor (leader) rank 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r, _ := fakeHierRoot(t, c.rank, n, L, false, func(string) abi.BootstrapRootReplyHier { return c.mk() })
			r.wait(t, start)
			if !strings.Contains(r.stderr.String(), c.want) {
				t.Errorf("the rank's log lacks %q:\n%s", c.want, r.stderr.String())
			}
		})
	}
}

// TestCHierFakeRingPeer: rank 1 of a 2x2 world is wired to a Go fake
// successor and a Go fake predecessor. A predecessor naming a rank that is
// not due is refused, naming the rank claimed; one sending a slice of the
// wrong size is refused, naming both sizes.
func TestCHierFakeRingPeer(t *testing.T) {
	requirePeerHost(t)
	const n, L = 4, 2
	for _, c := range []struct {
		name  string
		ext   bool
		claim int32
		slice []byte // what the predecessor sends at phase 1 (nil: nothing)
		want  string
	}{
		{"predecessor names another rank", false, 3, nil, "naming rank 3 (channel 0) arrived where the intra ring predecessor rank 0 was due"},
		{"a slice of the wrong size", false, 0, make([]byte, 30), "sent a 30-byte frame where 28 bytes were due"},
		{"predecessor names another rank (extended)", true, 3, nil, "naming rank 3 (channel 1) arrived where the intra ring predecessor rank 0 was due"},
		{"a slice of the wrong size (extended)", true, 0, make([]byte, 30), "sent a 30-byte RING_DATA where RING_DATA (28 bytes) was due"},
		{"an ABORT on the ring (extended)", true, 0, []byte("forged\n\x1b[31mlibnccom 1 NCCL WARN x"),
			`bootstrap aborted by intra ring predecessor rank 0 (peer 127.0.0.1:`},
	} {
		t.Run(c.name, func(t *testing.T) {
			succ, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer succ.Close()
			start := time.Now()
			r, listen := fakeHierRoot(t, 1, n, L, c.ext, func(string) abi.BootstrapRootReplyHier {
				rep := shape(1, n, L)
				rep.IntraNext = sockAddr(succ.Addr().(*net.TCPAddr))
				return rep
			})
			// The rank opens its successor link with its rank.
			s, err := succ.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			opening, want := make([]byte, 8), frame(le32(1))
			if c.ext {
				opening, want = make([]byte, len(hello(1, n, abi.BootstrapChannelRing))), hello(1, n, abi.BootstrapChannelRing)
			}
			if _, err := io.ReadFull(s, opening); err != nil || string(opening) != string(want) {
				t.Fatalf("the rank's successor link opened with %x (%v), want %x", opening, err, want)
			}
			p, err := net.Dial("tcp", listen)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			msg := frame(le32(c.claim))
			if c.slice != nil {
				msg = append(msg, frame(c.slice)...)
			}
			if c.ext {
				msg = hello(c.claim, n, abi.BootstrapChannelRing)
				switch {
				case strings.Contains(c.name, "ABORT"):
					msg = append(msg, extMsg(abi.BootstrapMsgAbort, c.slice)...)
				case c.slice != nil:
					msg = append(msg, extMsg(abi.BootstrapMsgRingData, c.slice)...)
				}
			}
			if _, err := p.Write(msg); err != nil {
				t.Fatal(err)
			}
			r.wait(t, start)
			if !strings.Contains(r.stderr.String(), c.want) {
				t.Errorf("the rank's log lacks %q:\n%s", c.want, r.stderr.String())
			}
			if !strings.Contains(r.stderr.String(), fmt.Sprint(p.LocalAddr())) && c.slice == nil {
				t.Errorf("the rank's log does not name the connecting address %s:\n%s", p.LocalAddr(), r.stderr.String())
			}
			noForgery(t, r.stderr.String(), "libnccom 1 NCCL WARN x")
		})
	}
}
