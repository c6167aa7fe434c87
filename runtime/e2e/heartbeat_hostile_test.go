package e2e

import (
	"net"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestCRankFakeRootHeartbeatPatterns: a fake root in the extended framing
// sends a C rank ROOT_WAIT heartbeats whose count stands still, goes round
// or rises, in place of INFO_FROM_ROOT. A count that moves is no answer
// either: the rank gives up three timeouts after its wait began, whatever
// the heartbeats say (TestCRankFakeRootHeartbeatsForComplete: the wait
// for COMPLETE).
func TestCRankFakeRootHeartbeatPatterns(t *testing.T) {
	requirePeerHost(t)
	const due = "INFO_FROM_ROOT"
	for _, hb := range hostile.HeartbeatRoots() {
		t.Run(due+"/"+hb.Name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			r := startRank(t, 1, 2, ln.Addr().String(), "idle", 0, "NRTABI_BOOTSTRAP_FRAMING=extended")
			_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(hostileBound))
			c := acceptRank(t, ln, r)
			defer c.Close()
			readRankMsg(t, c, r)
			start := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go sendRootWaits(c, hb.Every, hb.Nranks, hb.Have, stop)
			wantHeartbeatsRefused(t, r, start, due)
		})
	}
}

// TestCRankFakeRootHeartbeatsForComplete: a fake root in the extended
// framing that plays rank 0 too wires a C rank 1 of 2 (INFO_FROM_ROOT
// naming the fake rank 0, the ring hellos, the one all-gather step of the
// listen addresses), takes its RING_DONE and then sends only ROOT_WAIT
// heartbeats of each pattern in place of COMPLETE: the rank gives up three
// timeouts after RING_DONE, whatever the counts say.
func TestCRankFakeRootHeartbeatsForComplete(t *testing.T) {
	requirePeerHost(t)
	const due = "COMPLETE"
	for _, hb := range hostile.HeartbeatRoots() {
		t.Run(due+"/"+hb.Name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			peer, err := net.Listen("tcp", "127.0.0.1:0") // the fake rank 0
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			r := startRank(t, 1, 2, ln.Addr().String(), "idle", 0, "NRTABI_BOOTSTRAP_FRAMING=extended")
			_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(hostileBound))
			_ = peer.(*net.TCPListener).SetDeadline(time.Now().Add(hostileBound))
			write := func(c net.Conn, b []byte) {
				if _, err := c.Write(b); err != nil {
					t.Fatalf("writing to the rank: %v\n%s", err, r.stderr.String())
				}
			}
			c := acceptRank(t, ln, r)
			defer c.Close()
			_, rec := readRankMsg(t, c, r)
			reply := make([]byte, abi.SizeofBootstrapRootReply)
			v := abi.BootstrapRootReply{ClusterID: 1, Epoch: 1, Neighbour: sockAddr(peer.Addr().(*net.TCPAddr))}
			v.MarshalTo(reply)
			write(c, extMsg(abi.BootstrapMsgInfoFromRoot, reply))
			in := acceptRank(t, peer, r) // the rank's ring successor link: its HELLO
			defer in.Close()
			readRankMsg(t, in, r)
			out, err := net.DialTimeout("tcp", rankListen(rec), hostileBound)
			if err != nil {
				t.Fatalf("dialling the rank: %v\n%s", err, r.stderr.String())
			}
			defer out.Close()
			write(out, hello(0, 2, abi.BootstrapChannelRing))
			addr := sockAddr(peer.Addr().(*net.TCPAddr))
			ab := make([]byte, abi.SizeofNcclSocketAddress)
			addr.MarshalTo(ab)
			write(out, extMsg(abi.BootstrapMsgRingData, ab))
			readRankMsg(t, in, r)
			if typ, _ := readRankMsg(t, c, r); typ != abi.BootstrapMsgRingDone {
				t.Fatalf("the rank sent message type %d, not RING_DONE\n%s", typ, r.stderr.String())
			}
			start := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go sendRootWaits(c, hb.Every, hb.Nranks, hb.Have, stop)
			wantHeartbeatsRefused(t, r, start, due)
		})
	}
}
