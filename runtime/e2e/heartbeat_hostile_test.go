package e2e

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
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
			c, err := ln.Accept()
			if err != nil {
				<-r.done
				t.Fatalf("the rank did not connect: %v (%v)\n%s", err, r.err, r.stderr.String())
			}
			_ = c.SetDeadline(time.Now().Add(hostileCap))
			defer c.Close()
			read := func() {
				h := make([]byte, abi.BootstrapMsgHeaderSize)
				if _, err := io.ReadFull(c, h); err != nil {
					t.Fatalf("reading the rank: %v\n%s", err, r.stderr.String())
				}
				p := make([]byte, min(binary.LittleEndian.Uint32(h[4:]), 4096))
				if _, err := io.ReadFull(c, p); err != nil {
					t.Fatalf("reading the rank: %v\n%s", err, r.stderr.String())
				}
			}
			read()
			start := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				w := make([]byte, abi.SizeofBootstrapRootWait)
				tick := time.NewTicker(hb.Every)
				defer tick.Stop()
				for i := 0; ; i++ {
					v := abi.BootstrapRootWait{Have: hb.Have(i), Nranks: hb.Nranks}
					v.MarshalTo(w)
					if _, err := c.Write(extMsg(abi.BootstrapMsgRootWait, w)); err != nil {
						return
					}
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
			<-r.done
			took := r.ended.Sub(start)
			log := r.stderr.String()
			if strings.Contains(log, "Sanitizer") || strings.Contains(log, "runtime error") {
				t.Errorf("a sanitizer spoke:\n%s", log)
			}
			if limit := (3*hostileTimeout + 2) * time.Second; took > limit || r.err == nil {
				t.Errorf("the rank ended %s after the heartbeats started (%v), want a failure within %s\n%s", took.Round(time.Millisecond), r.err, limit, log)
			}
			if want := "and no " + due + " for 6 s: heartbeats do not extend the wait"; !strings.Contains(log, want) {
				t.Errorf("the rank's log lacks %q:\n%s", want, log)
			}
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
			accept := func(l net.Listener) net.Conn {
				c, err := l.Accept()
				if err != nil {
					<-r.done
					t.Fatalf("the rank did not connect: %v (%v)\n%s", err, r.err, r.stderr.String())
				}
				_ = c.SetDeadline(time.Now().Add(hostileCap))
				return c
			}
			read := func(c net.Conn) (uint32, []byte) {
				h := make([]byte, abi.BootstrapMsgHeaderSize)
				if _, err := io.ReadFull(c, h); err != nil {
					t.Fatalf("reading the rank: %v\n%s", err, r.stderr.String())
				}
				p := make([]byte, min(binary.LittleEndian.Uint32(h[4:]), 4096))
				if _, err := io.ReadFull(c, p); err != nil {
					t.Fatalf("reading the rank: %v\n%s", err, r.stderr.String())
				}
				return binary.LittleEndian.Uint32(h), p
			}
			write := func(c net.Conn, b []byte) {
				if _, err := c.Write(b); err != nil {
					t.Fatalf("writing to the rank: %v\n%s", err, r.stderr.String())
				}
			}
			c := accept(ln)
			defer c.Close()
			_, rec := read(c)
			reply := make([]byte, abi.SizeofBootstrapRootReply)
			v := abi.BootstrapRootReply{ClusterID: 1, Epoch: 1, Neighbour: sockAddr(peer.Addr().(*net.TCPAddr))}
			v.MarshalTo(reply)
			write(c, extMsg(abi.BootstrapMsgInfoFromRoot, reply))
			in := accept(peer) // the rank's ring successor link: its HELLO
			defer in.Close()
			read(in)
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
			read(in)
			if typ, _ := read(c); typ != abi.BootstrapMsgRingDone {
				t.Fatalf("the rank sent message type %d, not RING_DONE\n%s", typ, r.stderr.String())
			}
			start := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				w := make([]byte, abi.SizeofBootstrapRootWait)
				tick := time.NewTicker(hb.Every)
				defer tick.Stop()
				for i := 0; ; i++ {
					v := abi.BootstrapRootWait{Have: hb.Have(i), Nranks: hb.Nranks}
					v.MarshalTo(w)
					if _, err := c.Write(extMsg(abi.BootstrapMsgRootWait, w)); err != nil {
						return
					}
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
			<-r.done
			took := r.ended.Sub(start)
			log := r.stderr.String()
			if strings.Contains(log, "Sanitizer") || strings.Contains(log, "runtime error") {
				t.Errorf("a sanitizer spoke:\n%s", log)
			}
			if limit := (3*hostileTimeout + 2) * time.Second; took > limit || r.err == nil {
				t.Errorf("the rank ended %s after the heartbeats started (%v), want a failure within %s\n%s", took.Round(time.Millisecond), r.err, limit, log)
			}
			if want := "and no " + due + " for 6 s: heartbeats do not extend the wait"; !strings.Contains(log, want) {
				t.Errorf("the rank's log lacks %q:\n%s", want, log)
			}
		})
	}
}
