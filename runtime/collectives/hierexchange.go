package collectives

import (
	"fmt"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport"
)

// On a hierarchical world get_nccl_comm's two exchanges take the world's
// instances instead of the seed's binary tree and hypercube
// (docs/bootstrap-hierarchy.md#the-agree-phase, spec extension
// agree-exchange-hier): every member sends its signature to its instance's
// leader, every leader the AND of its instance to the root, and the root's
// unique id and verdict come back down the same two levels. The messages
// are the seed's (N-1 EncSigMsg up, N-1 EncUIDMsg down) and so is the
// verdict (each signature compared with the one above it, the root's
// verdict the only one returned), but the chain of dependent messages is 4
// long instead of 2 log2 N: on a host where every message is a scheduler
// wake-up of a process among N, the hops are the exchange's time.

// prepared is a transport that can open its connections to peers ahead of
// the sends that will use them (tcp.Endpoint.Prepare): the dials then run
// all at once while this rank waits for its first message, not one by one
// on the exchange's critical path.
type prepared interface {
	Prepare(peers []int)
}

// agreeShape is the L of the exchange's instances for the group bp on the
// world behind boot: the group's L when the world is hierarchical and the
// group lies on its instances (groupShape), else 0, the seed's tree and
// cube. Every rank computes the same from the same bp and the world's
// agreed L (the root refuses a rank whose L differs).
func agreeShape(boot transport.Transport, bp []uint32) int {
	hw, ok := boot.(hierWorld)
	if !ok {
		return 0
	}
	h, worldL := hw.Hier()
	if !h {
		return 0
	}
	l, _ := groupShape(worldL, bp)
	return l
}

// hierGroup is bootstrap rank rank's place among n ranks in instances of l.
type hierGroup struct {
	rank, n, l int
}

func (g hierGroup) leader() int { return g.rank / g.l * g.l }

// members are the other ranks of this rank's instance (its leader's sends).
func (g hierGroup) members() []int {
	var out []int
	for r := g.leader() + 1; r < min(g.n, g.leader()+g.l); r++ {
		out = append(out, r)
	}
	return out
}

// leaders are every instance's leader but the root's (the root's sends).
func (g hierGroup) leaders() []int {
	var out []int
	for r := g.l; r < g.n; r += g.l {
		out = append(out, r)
	}
	return out
}

// laterSends is every peer this rank will send to after it has received
// a message, in the order it sends: a leader the root (when it has members
// to hear first), then its members; the root the other leaders, then its
// members. A member's one send, to its leader, is its first act, so it is
// not among them: opening it ahead would only split its one write in two.
func (g hierGroup) laterSends() []int {
	switch {
	case g.rank != g.leader():
		return nil
	case g.rank != 0:
		if m := g.members(); len(m) > 0 {
			return append([]int{0}, m...)
		}
		return nil
	}
	return append(g.leaders(), g.members()...)
}

// validateSignatureHier is validate_rg_signature over the instances: a
// leader ANDs its members' verdicts and digest equality into its own and
// reports to the root, which does the same over the leaders.
func validateSignatureHier(tr transport.Transport, bp []uint32, g hierGroup, sig [16]byte) (bool, *Error) {
	match := true
	var buf [abi.EncSigMsgSize]byte
	recv := func(from int) *Error {
		if err := tr.Recv(int(bp[from]), buf[:]); err != nil {
			return fail(abi.NRTFailure, err, abi.MsgSigRecvFailed, int32(bp[from]))
		}
		if match {
			var got abi.EncSigMsg
			got.UnmarshalFrom(buf[:])
			match = got.Ok && got.Signature == sig
		}
		return nil
	}
	if g.rank == g.leader() {
		for _, m := range g.members() {
			if err := recv(m); err != nil {
				return false, err
			}
		}
	}
	if g.rank == 0 {
		for _, ld := range g.leaders() {
			if err := recv(ld); err != nil {
				return false, err
			}
		}
		return match, nil
	}
	to := g.leader()
	if g.rank == to {
		to = 0
	}
	out := abi.EncSigMsg{Signature: sig, Ok: match}
	out.MarshalTo(buf[:])
	if err := tr.Send(int(bp[to]), buf[:]); err != nil {
		return false, fail(abi.NRTFailure, err, abi.MsgSigSendFailed, int32(bp[to]))
	}
	return match, nil
}

// broadcastUIDHier is broadcast_unique_id over the instances: the root
// sends the id and its verdict to every other leader and its own members,
// each leader passes them on to its members. The verdict a rank returns is
// the root's, never its own.
func broadcastUIDHier(tr transport.Transport, bp []uint32, g hierGroup, uid *UniqueID, match bool) (bool, *Error) {
	valid := g.rank == 0 && match
	var buf [abi.EncUIDMsgSize]byte
	if g.rank != 0 {
		from := g.leader()
		if g.rank == from {
			from = 0
		}
		if err := tr.Recv(int(bp[from]), buf[:]); err != nil {
			return false, &Error{Status: abi.NRTFailure, Msg: fmt.Sprintf("failed to receive the unique id from %d", bp[from]), Err: err}
		}
		var got abi.EncUIDMsg
		got.UnmarshalFrom(buf[:])
		*uid, valid = got.ID, got.Valid
	}
	if g.rank != g.leader() {
		return valid, nil
	}
	out := abi.EncUIDMsg{ID: *uid, Valid: valid}
	out.MarshalTo(buf[:])
	var down []int
	if g.rank == 0 {
		down = g.leaders()
	}
	for _, to := range append(down, g.members()...) {
		if err := tr.Send(int(bp[to]), buf[:]); err != nil {
			return false, &Error{Status: abi.NRTFailure, Msg: fmt.Sprintf("failed to send the unique id to %d", bp[to]), Err: err}
		}
	}
	return valid, nil
}

// flatLaterSends is laterSends for the seed's tree and cube: the tree
// parent of a rank with a child to hear first, then every hypercube child.
func flatLaterSends(rank, n int) []int {
	var out []int
	if rank > 0 && treeChildren(rank)[0] < n {
		out = append(out, treeParent(rank))
	}
	for step := cubeMask(rank, n) >> 1; step != 0; step >>= 1 {
		if rank+step < n {
			out = append(out, rank+step)
		}
	}
	return out
}

// agree is get_nccl_comm's two exchanges, the signature verdict up and the
// unique id and the root's verdict down: over the instances when l > 0,
// else the seed's tree and cube. Before either, a transport that can
// (prepared) opens the connections this rank will send on once it has
// heard from another (laterSends). It returns
// this rank's own AND (what the root's verdict is made of) and the root's
// verdict.
func agree(tr transport.Transport, bp []uint32, rank, n, l int, sig [16]byte, uid *UniqueID) (match, valid bool, _ *Error) {
	g := hierGroup{rank: rank, n: n, l: l}
	if p, ok := tr.(prepared); ok {
		peers := flatLaterSends(rank, n)
		if l > 0 {
			peers = g.laterSends()
		}
		global := make([]int, len(peers))
		for i, r := range peers {
			global[i] = int(bp[r])
		}
		p.Prepare(global)
	}
	var err *Error
	if l > 0 {
		if match, err = validateSignatureHier(tr, bp, g, sig); err != nil {
			return false, false, err
		}
		valid, err = broadcastUIDHier(tr, bp, g, uid, match)
		return match, valid, err
	}
	if match, err = validateSignature(tr, bp, rank, n, sig); err != nil {
		return false, false, err
	}
	valid, err = broadcastUID(tr, bp, rank, n, uid, match)
	return match, valid, err
}
