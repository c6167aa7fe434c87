package tcp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// frame is one bootstrap frame as bytes.
func frame(typ uint32, payload []byte) []byte {
	b := make([]byte, int(abi.BootstrapMsgHeaderSize)+len(payload))
	h := abi.BootstrapMsgHeader{Type: typ, Length: uint32(len(payload))}
	h.MarshalTo(b)
	copy(b[abi.BootstrapMsgHeaderSize:], payload)
	return b
}

// record is an INFO_TO_ROOT payload; a non-nil hash makes it a global one.
func record(sanity uint32, rank, nranks int, hash *abi.NcclNRTGitHash) []byte {
	info := abi.ExtInfo{Sanity: sanity, Rank: int32(rank), Nranks: int32(nranks), ExtAddressListen: EncodeAddr(netip.MustParseAddrPort("127.0.0.1:9"))}
	if hash == nil {
		b := make([]byte, abi.SizeofExtInfo)
		info.MarshalTo(b)
		return b
	}
	g := abi.ExtInfoGlobal{Info: info, NcclNRTGitHash: *hash}
	b := make([]byte, abi.SizeofExtInfoGlobal)
	g.MarshalTo(b)
	return b
}

// rogue connects to the root, writes raw bytes, optionally hangs up, and
// reports the ABORT text the root sends back (or the read error).
type rogue struct {
	c     net.Conn
	local string
	got   chan string
}

func newRogue(t *testing.T, root netip.AddrPort, data []byte, hangUp bool) *rogue {
	t.Helper()
	c, err := net.Dial("tcp", root.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &rogue{c: c, local: c.LocalAddr().String(), got: make(chan string, 1)}
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	if hangUp {
		c.(*net.TCPConn).CloseWrite()
	}
	go func() {
		l := &link{c: c, peer: "the root", timeout: 5 * time.Second}
		_, _, err := l.recvAny("", int(abi.BootstrapAbortTextMax), false)
		var ab *AbortError
		if errors.As(err, &ab) {
			r.got <- ab.Reason
		} else {
			r.got <- fmt.Sprint("no ABORT: ", err)
		}
		c.Close()
	}()
	return r
}

func TestRootRefusesABadWorld(t *testing.T) {
	good := func() *abi.NcclNRTGitHash { h, _ := GitHash(SpecVersions{}); return &h }
	cases := []struct {
		name   string
		global bool
		nranks int
		send   func(t *testing.T, root netip.AddrPort) []*rogue
		want   func(r []*rogue) []string
	}{
		{"bad magic", true, 2, func(t *testing.T, root netip.AddrPort) []*rogue {
			return []*rogue{newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(0x12345678, 1, 2, good())), false)}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[0].local + " rank 1", "bad sanity magic 0x12345678", `expected 0x61796c69 ("ilya")`}
		}},
		{"wrong nranks", true, 2, func(t *testing.T, root netip.AddrPort) []*rogue {
			return []*rogue{newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, 3, good())), false)}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[0].local + " rank 1", "says nranks 3, this root serves a world of 2"}
		}},
		{"rank out of range", true, 2, func(t *testing.T, root netip.AddrPort) []*rogue {
			return []*rogue{newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 5, 2, good())), false)}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[0].local + " rank 5", "rank 5 is out of range 0..1"}
		}},
		{"duplicate rank", false, 3, func(t *testing.T, root netip.AddrPort) []*rogue {
			first := newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, 3, nil)), false)
			time.Sleep(50 * time.Millisecond) // let the first claim rank 1
			return []*rogue{first, newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, 3, nil)), false)}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[1].local + " rank 1", "rank 1 is already taken by peer " + r[0].local}
		}},
		{"another message first", true, 2, func(t *testing.T, root netip.AddrPort) []*rogue {
			return []*rogue{newRogue(t, root, frame(abi.BootstrapMsgPeerData, []byte("hello")), false)}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[0].local, "sent PEER_DATA where its INFO_TO_ROOT record was due"}
		}},
		{"a local record to a global root", true, 2, func(t *testing.T, root netip.AddrPort) []*rogue {
			return []*rogue{newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, 2, nil)), false)}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[0].local, "sent a 40-byte INFO_TO_ROOT record, expected 56 (extInfo 40 B + nccl_nrt_git_hash 16 B"}
		}},
		{"truncated record", true, 2, func(t *testing.T, root netip.AddrPort) []*rogue {
			f := frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, 2, good()))
			return []*rogue{newRogue(t, root, f[:int(abi.BootstrapMsgHeaderSize)+30], true)}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[0].local + " rank 1 closed the connection after 30 of 56 bytes of its INFO_TO_ROOT record"}
		}},
		{"mismatched git-hash tag", true, 3, func(t *testing.T, root netip.AddrPort) []*rogue {
			odd := abi.NcclNRTGitHash{}
			copy(odd.Nccom[:], abi.LibnccomGit)
			copy(odd.NRT[:], "deadbeef")
			return []*rogue{
				newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, 3, good())), false),
				newRogue(t, root, frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 2, 3, &odd)), false),
			}
		}, func(r []*rogue) []string {
			return []string{"peer " + r[1].local + " rank 2 carries nccl_nrt_git_hash libnccom \"1a31ba18\" + libnrt \"deadbeef\"",
				"the other 2 ranks libnccom \"1a31ba18\" + libnrt \"0b044f4c\"", "different libnccom or libnrt builds"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := testNetExt(t, 3*time.Second)
			root := loopRoot(t, n, c.nranks, c.global)
			// A real rank 0 waits for the world and must hear why it failed.
			var rank0 error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, rank0 = testNetExt(t, 3*time.Second).InitFlat(t.Context(), root.Addr(), 0, c.nranks, c.global)
			}()
			time.Sleep(50 * time.Millisecond)
			rogues := c.send(t, root.Addr())
			err := root.Wait()
			wg.Wait()
			if err == nil {
				t.Fatal("the root accepted the world")
			}
			var ab *AbortError
			if !errors.As(rank0, &ab) {
				t.Fatalf("rank 0 got %v, want the root's ABORT", rank0)
			}
			for _, want := range c.want(rogues) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("root error %q lacks %q", err, want)
				}
				if !strings.Contains(ab.Reason, want) {
					t.Errorf("rank 0's ABORT %q lacks %q", ab.Reason, want)
				}
			}
			for _, r := range rogues {
				if got := <-r.got; got != ab.Reason {
					t.Errorf("peer %s got %q, rank 0 got %q", r.local, got, ab.Reason)
				}
			}
		})
	}
}

// TestTimeoutBoundsEverySocketOperation shows each kind of operation giving
// up, naming its peer, once NEURON_CCOM_SOCK_TIMEOUT has passed.
func TestTimeoutBoundsEverySocketOperation(t *testing.T) {
	// Long enough that a loaded machine still wires a world (the root's
	// heartbeats are a fraction of it), short enough to keep the test quick.
	const timeout = time.Second
	bounded := func(t *testing.T, start time.Time, err error, wants ...string) {
		t.Helper()
		if took := time.Since(start); took > 20*timeout {
			t.Errorf("took %s with a %s timeout", took, timeout)
		}
		if err == nil {
			t.Fatal("no error")
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q", err, w)
			}
		}
	}
	t.Run("connect", func(t *testing.T) {
		start := time.Now()
		_, err := testNetExt(t, timeout).InitFlat(t.Context(), netip.MustParseAddrPort("127.0.0.1:1"), 0, 2, false)
		bounded(t, start, err, "rank 0: cannot connect to the root 127.0.0.1:1 within "+timeout.String()+" (NEURON_CCOM_SOCK_TIMEOUT)")
	})
	t.Run("accept", func(t *testing.T) {
		// rank 2 of 3 never comes: the root gives up on it, and the ranks
		// that came (kept alive by the root's heartbeats) hear who is missing.
		start := time.Now()
		_, errs, root := worldExt(t, 3, false, timeout, nil, 0, 1)
		bounded(t, start, root.Wait(), "no INFO_TO_ROOT from rank 2 within "+timeout.String())
		for r := 0; r < 2; r++ {
			bounded(t, start, errs[r], fmt.Sprintf("rank %d: bootstrap aborted by the root", r), "no INFO_TO_ROOT from rank 2")
		}
	})
	t.Run("read", func(t *testing.T) {
		// A "root" that takes the record and says nothing.
		ln := loopbackListener(t)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				defer c.Close()
				io.Copy(io.Discard, c)
			}
		}()
		start := time.Now()
		_, err := testNetExt(t, timeout).InitFlat(t.Context(), netip.MustParseAddrPort(ln.Addr().String()), 1, 2, false)
		bounded(t, start, err, "waiting for INFO_FROM_ROOT: nothing from the root "+ln.Addr().String()+" within "+timeout.String())
	})
	t.Run("write", func(t *testing.T) {
		eps, errs, _ := worldExt(t, 2, false, timeout, nil)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		// Rank 1 never reads: rank 0's write fills the socket buffers and stalls.
		start := time.Now()
		err := eps[0].Send(1, make([]byte, 64<<20))
		bounded(t, start, err, "sending PEER_DATA to rank 1 (", "not done within "+timeout.String())
	})
	t.Run("recv from a rank that never sends", func(t *testing.T) {
		eps, _, _ := worldExt(t, 2, false, timeout, nil)
		start := time.Now()
		err := eps[1].Recv(0, make([]byte, 8))
		bounded(t, start, err, "rank 1: waiting for rank 0 (", "it did not connect within "+timeout.String())
	})
}

// TestAPeerFailureReachesEveryRank: when one rank's operation fails because
// a peer went away, every other rank blocked on the world fails with the
// same cause, naming the peer.
func TestAPeerFailureReachesEveryRank(t *testing.T) {
	eps, errs, _ := worldExt(t, 4, false, 3*time.Second, nil)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := eps[3].Send(0, []byte("half")); err != nil { // then rank 3 vanishes mid-conversation
		t.Fatal(err)
	}
	// Rank 0 knows rank 3 by the rank its connection claims and the
	// address the connection came from.
	gone := "peer " + eps[3].sendc[0].c.LocalAddr().String()
	eps[3].Close()
	got := make([]error, 3)
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r == 0 {
				buf := make([]byte, 4)
				if err := eps[0].Recv(3, buf); err != nil {
					got[0] = err
					return
				}
				got[0] = eps[0].Recv(3, buf) // the second message never comes
				return
			}
			got[r] = eps[r].Recv((r+1)%3, make([]byte, 8)) // waits on a healthy peer
		}()
	}
	wg.Wait()
	for r, err := range got {
		if err == nil || !strings.Contains(err.Error(), "rank 3 ("+gone+")") || !strings.Contains(err.Error(), "closed the connection") {
			t.Errorf("rank %d: %v; want the failure naming rank 3 (%s)", r, err, gone)
		}
	}
}

func TestIPv6World(t *testing.T) {
	if _, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	n := NewNet(Config{Timeout: 3 * time.Second, Family: "AF_INET6", IfName: "lo", Logger: quietLog})
	root, err := n.CreateRoot(t.Context(), netip.MustParseAddrPort("[::1]:0"), 3, true)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	eps := make([]*Endpoint, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for r := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eps[r], errs[r] = NewNet(Config{Timeout: 3 * time.Second, Family: "AF_INET6", IfName: "lo", Logger: quietLog}).InitFlat(t.Context(), root.Addr(), r, 3, true)
		}()
	}
	wg.Wait()
	for r, e := range eps {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		defer e.Close()
		if !e.Addr().Addr().Is6() {
			t.Errorf("rank %d listens on %s", r, e.Addr())
		}
	}
	id := NewUniqueID(root.Addr())
	if back, err := RootAddr(&id); err != nil || back != root.Addr() {
		t.Errorf("IPv6 unique id round trip: %s %v", back, err)
	}
	buf := make([]byte, 3)
	buf[1] = 'b'
	if err := eps[1].Send(2, []byte("v6")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 2)
	if err := eps[2].Recv(1, got); err != nil || string(got) != "v6" {
		t.Errorf("%q %v", got, err)
	}
}

// TestRootNamesAHungUpRank: a rank that hangs up on the extended root after
// its record is named by the address its peers dial and how far it had got
// (docs/bootstrap-hierarchy.md#a-rank-that-hangs-up-on-its-root), to the
// root's caller and in the ABORT every rank hears. Rank 1's record says it
// listens on 127.0.0.1:9.
func TestRootNamesAHungUpRank(t *testing.T) {
	good := func() *abi.NcclNRTGitHash { h, _ := GitHash(SpecVersions{}); return &h }
	for _, c := range []struct {
		name   string
		nranks int // rank 2 of 3 never comes: the root is still gathering
		phase  string
	}{{"before its reply", 3, "before its INFO_FROM_ROOT"}, {"in the gather", 2, "after its INFO_FROM_ROOT went out, before its RING_DONE"}} {
		t.Run(c.name, func(t *testing.T) {
			// the root lingers up to its timeout for a rank that never
			// comes (rank 2): a short one keeps the test quick
			n := testNetExt(t, time.Second)
			root := loopRoot(t, n, c.nranks, true)
			var rank0 error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, rank0 = testNetExt(t, time.Second).InitFlat(t.Context(), root.Addr(), 0, c.nranks, true)
			}()
			time.Sleep(50 * time.Millisecond)
			r := newRogue(t, root.Addr(), frame(abi.BootstrapMsgInfoToRoot, record(abi.BootstrapSanity, 1, c.nranks, good())), true)
			err := root.Wait()
			wg.Wait()
			want := "peer " + r.local + " rank 1 (listening on 127.0.0.1:9, " + c.phase + ") closed its root connection before the world was complete"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("root error %v lacks %q", err, want)
			}
			var ab *AbortError
			if !errors.As(rank0, &ab) || !strings.Contains(ab.Reason, want) {
				t.Errorf("rank 0 got %v, want the root's ABORT with %q", rank0, want)
			}
		})
	}
}
