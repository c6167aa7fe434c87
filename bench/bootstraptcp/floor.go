package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The floor: the least any implementation of the seed's protocol does on
// top of the star (docs/benchmarks.md#the-floor-under-agree). The star's
// one gather gives every rank the table, the verdict and the id, the
// cheapest way there is; the seed asks two things more of a world:
//
//   - its ring (upstream's bootstrapInit connects every rank to its next
//     and accepts its previous; on a hierarchical world the instance's
//     ring and the leaders'): here each link is made and carries one
//     hello, no all-gather at all;
//   - libnrt's get_nccl_comm, twice (the global group, then the world
//     group), each the signature verdict AND-reduced to rank 0 and rank
//     0's id and verdict sent to every rank (seed 004 §5): here over the
//     instances, as nrtabi's agree-exchange-hier shape, each member and
//     leader on one connection both ways, dialled once for both calls.
//
// No checks beyond the star's, no framing but the star's, no relay: a
// lower bound of what the real bootstraps (flat, hierarchical, multi-root,
// Go and C) measure, run by the same launcher and judged alike.

// floor is one rank's part in one floor world: the star's gather, then L
// ranks an instance (L >= N: one instance).
type floor struct {
	star
	l int
	// viaRoot runs the agree through the root's thread on the
	// connections of the gather, kept open (no connection made for it):
	// the cheapest agree there is, but one process then handles all 4N
	// messages
	viaRoot bool
}

// Kinds of connection a floor rank accepts; each opens with a hello of
// {u32 kind, u32 rank}.
const (
	floorRing   = 1 // from the rank's previous on its instance's ring
	floorLeader = 2 // from the previous leader on the leaders' ring
	floorAgree  = 3 // from a member (to its leader) or a leader (to rank 0)
)

const floorHelloSize = 8

// shape is this rank's place: its ring neighbours, its leader and the
// leaders' ring (leaders only), and who it hears in the agree.
type floorShape struct {
	prev, next             int
	leader                 int
	prevLeader, nextLeader int // -1: not a leader, or one instance
	members                []int
	leaders                []int // rank 0 only: every other leader
}

func (f floor) shape() floorShape {
	n, r, l := f.nranks, f.rank, f.l
	if l < 1 || l > n {
		l = n
	}
	var sh floorShape
	sh.prev, sh.next = worldprog.RingNeighbours(r, n, l)
	sh.leader = r / l * l
	sh.prevLeader, sh.nextLeader = -1, -1
	h := (n + l - 1) / l
	if r == sh.leader {
		for m := r + 1; m < min(n, r+l); m++ {
			sh.members = append(sh.members, m)
		}
		if h > 1 {
			sh.nextLeader = (r + l) % (h * l)
			sh.prevLeader = (r - l + h*l) % (h * l)
		}
	}
	if r == 0 {
		for ld := l; ld < n; ld += l {
			sh.leaders = append(sh.leaders, ld)
		}
	}
	return sh
}

// runFloor is runRank's floor: rank 0 serves the star's root, every rank
// joins it, builds its rings and runs the two get_nccl_comm calls.
func runFloor(ctx context.Context, f floor, res *worldprog.Report) error {
	rounds := 0
	if f.viaRoot {
		rounds = 2
	}
	return withRoot(ctx, f.star, rounds, res, func(ctx context.Context) error {
		c := worldprog.Context(f.rank, f.nranks, false)
		if err := collectives.Sign(c, uint32(f.rank)); err != nil {
			return err
		}
		return joinFloor(ctx, f, c.Signature, res)
	})
}

// joinFloor is one rank's floor under signature sig.
func joinFloor(ctx context.Context, f floor, sig [16]byte, res *worldprog.Report) error {
	got, ln, rc, err := joinStarOn(ctx, f.star, sig)
	if ln != nil {
		defer ln.Close()
		defer rc.Close()
	}
	if err != nil {
		return err
	}
	sh := f.shape()
	if f.viaRoot {
		// the agree runs on the root's connections: nobody dials this
		// rank for it
		sh.members, sh.leaders = nil, nil
	}
	in := acceptFloor(ctx, ln, f.expected(sh))
	defer in.close()
	var out []net.Conn
	defer func() {
		for _, c := range out {
			c.Close()
		}
	}()
	dial := func(kind uint32, to int) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", got.Peers[to].String())
		if err != nil {
			return nil, fmt.Errorf("rank %d: dialling rank %d at %s: %w", f.rank, to, got.Peers[to], ctxErr(ctx, err))
		}
		out = append(out, c)
		var hello [floorHelloSize]byte
		binary.LittleEndian.PutUint32(hello[0:], kind)
		binary.LittleEndian.PutUint32(hello[4:], uint32(f.rank))
		defer watch(ctx, c)()
		if _, err := c.Write(hello[:]); err != nil {
			return nil, fmt.Errorf("rank %d: hello to rank %d: %w", f.rank, to, ctxErr(ctx, err))
		}
		return c, nil
	}
	// The boot: the rings made.
	if sh.next != f.rank {
		if _, err := dial(floorRing, sh.next); err != nil {
			return err
		}
		if _, err := in.from(ctx, floorRing, sh.prev); err != nil {
			return err
		}
	}
	if sh.nextLeader >= 0 {
		if _, err := dial(floorLeader, sh.nextLeader); err != nil {
			return err
		}
		if _, err := in.from(ctx, floorLeader, sh.prevLeader); err != nil {
			return err
		}
	}
	res.TBoot, res.UBoot = time.Now(), worldprog.SelfUsage()
	res.Prev, res.Next = sh.prev, sh.next
	if f.l < f.nranks {
		res.PerInstance = f.l
	}
	// The agree: get_nccl_comm twice, over one connection a pair, or
	// through the root.
	var up *floorConn
	if f.viaRoot {
		up = &floorConn{c: rc, r: bufio.NewReader(rc), peer: -1}
	} else if f.rank != 0 {
		to := sh.leader
		if to == f.rank {
			to = 0
		}
		c, err := dial(floorAgree, to)
		if err != nil {
			return err
		}
		up = &floorConn{c: c, r: bufio.NewReader(c), peer: to}
	}
	var below []*floorConn
	for _, m := range append(append([]int(nil), sh.members...), sh.leaders...) {
		fc, err := in.from(ctx, floorAgree, m)
		if err != nil {
			return err
		}
		below = append(below, fc)
	}
	valid := false
	for call := 0; call < 2; call++ {
		if valid, err = floorAgreeOnce(ctx, f.rank, up, below, sig, got); err != nil {
			return err
		}
	}
	res.TAgree, res.UAgree = time.Now(), worldprog.SelfUsage()
	ap, err := tcp.RootAddr(&got.ID)
	if err != nil {
		return err
	}
	res.UID = ap.String()
	if !valid {
		return errors.New(cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(f.rank)))
	}
	return nil
}

// expected is how many connections rank f's listener takes: its ring's
// previous, its previous leader, its members, and at rank 0 the leaders.
func (f floor) expected(sh floorShape) int {
	n := len(sh.members) + len(sh.leaders)
	if sh.next != f.rank {
		n++
	}
	if sh.prevLeader >= 0 {
		n++
	}
	return n
}

// floorAgreeOnce is one get_nccl_comm: the verdicts up (each signature
// compared with this rank's own), rank 0's id and verdict down.
func floorAgreeOnce(ctx context.Context, rank int, up *floorConn, below []*floorConn, sig [16]byte, got starResult) (bool, error) {
	match := true
	var sb [abi.EncSigMsgSize]byte
	for _, b := range below {
		if err := recvFrame(ctx, b.c, b.r, abi.BootstrapMsgPeerData, sb[:]); err != nil {
			return false, fmt.Errorf("rank %d: the verdict of rank %d: %w", rank, b.peer, err)
		}
		var m abi.EncSigMsg
		m.UnmarshalFrom(sb[:])
		match = match && m.Ok && m.Signature == sig
	}
	var ub [abi.EncUIDMsgSize]byte
	down := abi.EncUIDMsg{ID: got.ID, Valid: match}
	if up != nil {
		m := abi.EncSigMsg{Signature: sig, Ok: match}
		m.MarshalTo(sb[:])
		if err := sendFrame(ctx, up.c, abi.BootstrapMsgPeerData, sb[:]); err != nil {
			return false, fmt.Errorf("rank %d: its verdict to rank %d: %w", rank, up.peer, err)
		}
		if err := recvFrame(ctx, up.c, up.r, abi.BootstrapMsgPeerData, ub[:]); err != nil {
			return false, fmt.Errorf("rank %d: the id from rank %d: %w", rank, up.peer, err)
		}
		down.UnmarshalFrom(ub[:])
	}
	down.MarshalTo(ub[:])
	for _, b := range below {
		if err := sendFrame(ctx, b.c, abi.BootstrapMsgPeerData, ub[:]); err != nil {
			return false, fmt.Errorf("rank %d: the id to rank %d: %w", rank, b.peer, err)
		}
	}
	return down.Valid, nil
}

// floorConn is one agree connection and its reader.
type floorConn struct {
	c    net.Conn
	r    *bufio.Reader
	peer int
}

// floorIn is what a rank's listener has taken, by kind and rank.
type floorIn struct {
	ch   chan floorAccepted
	have map[[2]int]*floorConn
	all  []net.Conn
	stop func() bool
}

type floorAccepted struct {
	kind, rank int
	fc         *floorConn
	err        error
}

// acceptFloor takes want connections on ln, each opened by its hello,
// until ctx ends.
func acceptFloor(ctx context.Context, ln net.Listener, want int) *floorIn {
	in := &floorIn{ch: make(chan floorAccepted, want+1), have: map[[2]int]*floorConn{}}
	in.stop = context.AfterFunc(ctx, func() { ln.Close() })
	go func() {
		for i := 0; i < want; i++ {
			c, err := ln.Accept()
			if err != nil {
				in.ch <- floorAccepted{err: ctxErr(ctx, err)}
				return
			}
			r := bufio.NewReader(c)
			var hello [floorHelloSize]byte
			done := watch(ctx, c)
			_, err = io.ReadFull(r, hello[:])
			done()
			if err != nil {
				c.Close()
				in.ch <- floorAccepted{err: fmt.Errorf("a hello from %s: %w", c.RemoteAddr(), ctxErr(ctx, err))}
				return
			}
			kind, rank := int(binary.LittleEndian.Uint32(hello[0:])), int(binary.LittleEndian.Uint32(hello[4:]))
			in.ch <- floorAccepted{kind: kind, rank: rank, fc: &floorConn{c: c, r: r, peer: rank}}
		}
	}()
	return in
}

// from is the connection of kind from rank, waiting for it until ctx ends.
func (in *floorIn) from(ctx context.Context, kind, rank int) (*floorConn, error) {
	for {
		if fc, ok := in.have[[2]int{kind, rank}]; ok {
			return fc, nil
		}
		select {
		case a := <-in.ch:
			if a.err != nil {
				return nil, a.err
			}
			in.all = append(in.all, a.fc.c)
			k := [2]int{a.kind, a.rank}
			if in.have[k] != nil {
				return nil, fmt.Errorf("two connections of kind %d from rank %d", a.kind, a.rank)
			}
			in.have[k] = a.fc
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for rank %d (kind %d): %w", rank, kind, context.Cause(ctx))
		}
	}
}

func (in *floorIn) close() {
	in.stop()
	for _, c := range in.all {
		c.Close()
	}
}
