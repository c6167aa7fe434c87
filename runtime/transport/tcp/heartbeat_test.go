package tcp

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/hostile"
)

// heartbeatRoot is a hostile root of the extended framing: it takes one
// rank's INFO_TO_ROOT and, when answer is set, gives it a one-rank world
// (INFO_FROM_ROOT naming the rank itself) and takes its RING_DONE; then it
// sends only ROOT_WAIT heartbeats of pattern hb until stop or a hang-up.
func heartbeatRoot(t *testing.T, ln net.Listener, hb hostile.Heartbeats, answer bool, stop <-chan struct{}) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	read := func() (uint32, []byte, error) {
		var h [abi.BootstrapMsgHeaderSize]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return 0, nil, err
		}
		p := make([]byte, min(binary.LittleEndian.Uint32(h[4:]), 4096))
		_, err := io.ReadFull(c, p)
		return binary.LittleEndian.Uint32(h[:]), p, err
	}
	send := func(typ uint32, p []byte) error {
		h := make([]byte, abi.BootstrapMsgHeaderSize, int(abi.BootstrapMsgHeaderSize)+len(p))
		hd := abi.BootstrapMsgHeader{Type: typ, Length: uint32(len(p))}
		hd.MarshalTo(h)
		_, err := c.Write(append(h, p...))
		return err
	}
	_, rec, err := read()
	if err != nil {
		return
	}
	if answer {
		var info abi.ExtInfo
		info.UnmarshalFrom(rec)
		reply := make([]byte, abi.SizeofBootstrapRootReply)
		r := abi.BootstrapRootReply{ClusterID: 1, Epoch: 1, Neighbour: info.ExtAddressListen}
		r.MarshalTo(reply)
		if send(abi.BootstrapMsgInfoFromRoot, reply) != nil {
			return
		}
		if typ, _, err := read(); err != nil || typ != abi.BootstrapMsgRingDone {
			return
		}
	}
	w := make([]byte, abi.SizeofBootstrapRootWait)
	tick := time.NewTicker(hb.Every)
	defer tick.Stop()
	for i := 0; ; i++ {
		v := abi.BootstrapRootWait{Have: hb.Have(i), Nranks: hb.Nranks}
		v.MarshalTo(w)
		if send(abi.BootstrapMsgRootWait, w) != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// TestRootHeartbeatsDoNotHoldRank: a root that sends ROOT_WAIT heartbeats
// in place of INFO_FROM_ROOT (a world of two), or in place of COMPLETE
// after RING_DONE (a world of one), with a count that stands still, goes
// round, or rises, holds a Go rank no longer than three socket timeouts in
// all: the rank fails naming the root and the total, heartbeats or not.
func TestRootHeartbeatsDoNotHoldRank(t *testing.T) {
	const timeout = 400 * time.Millisecond
	bound := rootAnswerWithin(timeout) + time.Second
	for _, answer := range []bool{false, true} {
		for _, hb := range hostile.HeartbeatRoots() {
			name := "INFO_FROM_ROOT/" + hb.Name
			if answer {
				name = "COMPLETE/" + hb.Name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ln := loopbackListener(t)
				stop := make(chan struct{})
				defer close(stop)
				go heartbeatRoot(t, ln, hb, answer, stop)
				nranks, rank := 2, 1
				if answer {
					nranks, rank = 1, 0
				}
				// The context only ends a rank that the heartbeats hold,
				// so the old behaviour fails here instead of hanging.
				ctx, cancel := context.WithTimeout(context.Background(), 2*bound)
				defer cancel()
				start := time.Now()
				ep, err := testNetExt(t, timeout).InitFlat(ctx, netip.MustParseAddrPort(ln.Addr().String()), rank, nranks, false)
				took := time.Since(start)
				if ep != nil {
					ep.Close()
				}
				t.Logf("after %s: %v", took.Round(time.Millisecond), err)
				if err == nil || took > bound || !strings.Contains(err.Error(), "do not extend the wait") || !strings.Contains(err.Error(), ln.Addr().String()) {
					t.Errorf("the rank ended after %s with %v; want a failure naming the root within %s", took.Round(time.Millisecond), err, bound)
				}
			})
		}
	}
}

// FuzzAwaitReply feeds arbitrary bytes to the wait for INFO_FROM_ROOT, as
// a root would send them (heartbeats, replies, garbage): each run ends
// with the reply or an error, never a panic, and never later than the
// total deadline however many heartbeats the bytes hold.
func FuzzAwaitReply(f *testing.F) {
	hb := func(have uint32) []byte {
		h := make([]byte, abi.BootstrapMsgHeaderSize+abi.SizeofBootstrapRootWait)
		x := abi.BootstrapMsgHeader{Type: abi.BootstrapMsgRootWait, Length: uint32(abi.SizeofBootstrapRootWait)}
		x.MarshalTo(h)
		w := abi.BootstrapRootWait{Have: have, Nranks: 2}
		w.MarshalTo(h[abi.BootstrapMsgHeaderSize:])
		return h
	}
	f.Add(append(hb(0), hb(1)...))
	f.Add([]byte{2, 0, 0, 0, 48, 0, 0, 0})
	f.Add([]byte{3, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	const total = 200 * time.Millisecond
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := net.Pipe()
		defer b.Close()
		go func() {
			for range 64 { // the same bytes again and again: a root that never stops
				if _, err := a.Write(data); err != nil || len(data) == 0 {
					break
				}
			}
			a.Close()
		}()
		l := &link{c: b, peer: "the fuzzer", timeout: time.Second}
		start := time.Now()
		p, err := awaitReply(l, abi.SizeofBootstrapRootReply, total)
		if took := time.Since(start); took > total+time.Second {
			t.Fatalf("awaitReply took %s, past its %s total", took, total)
		}
		if err == nil && len(p) != abi.SizeofBootstrapRootReply {
			t.Fatalf("a %d-byte reply", len(p))
		}
	})
}
