package collectives

import (
	"fmt"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport"
)

// The two exchanges of get_nccl_comm run over the same bootstrap_participants
// array (bp maps a bootstrap rank to its transport peer, the global device id)
// but with two different shapes: the signature verdict is AND-reduced up a
// binary tree so only the root learns it, then the root's unique id and
// verdict fan out down a hypercube so every rank learns both.

// treeParent and treeChildren are the binary tree of validate_rg_signature.
func treeParent(r int) int       { return (r - 1) >> 1 }
func treeChildren(r int) [2]int  { return [2]int{2*r + 1, 2*r + 2} }
func cubeParent(r, mask int) int { return r &^ mask }

// cubeMask is the loop of broadcast_unique_id that climbs to this rank's
// hypercube level: the lowest set bit of a non-root rank, the first power of
// two not below n for the root.
func cubeMask(rank, n int) int {
	mask := 1
	for mask&rank == 0 {
		mask <<= 1
		if n <= mask {
			break
		}
	}
	return mask
}

// TreeRounds is how many message hops the signature AND-reduce needs to reach
// the root of an n-rank binary tree (the depth of rank n-1).
func TreeRounds(n int) int {
	d := 0
	for r := n - 1; r > 0; r = treeParent(r) {
		d++
	}
	return d
}

// CubeRounds is how many message hops the unique-id broadcast needs to reach
// every rank of an n-rank hypercube (ceil(log2 n)).
func CubeRounds(n int) int {
	d := 0
	for 1<<d < n {
		d++
	}
	return d
}

// validateSignature is validate_rg_signature: receive each child's verdict,
// AND it (and the child's digest equality) into this rank's, report up.
func validateSignature(tr transport.Transport, bp []uint32, rank, n int, sig [16]byte) (bool, *Error) {
	match := true
	var buf [abi.EncSigMsgSize]byte
	for _, child := range treeChildren(rank) {
		if child >= n {
			continue
		}
		if err := tr.Recv(int(bp[child]), buf[:]); err != nil {
			return false, fail(abi.NRTFailure, err, abi.MsgSigRecvFailed, int32(bp[child]))
		}
		if match {
			var got abi.EncSigMsg
			got.UnmarshalFrom(buf[:])
			match = got.Ok && got.Signature == sig
		}
	}
	if rank > 0 {
		parent := treeParent(rank)
		out := abi.EncSigMsg{Signature: sig, Ok: match}
		out.MarshalTo(buf[:])
		if err := tr.Send(int(bp[parent]), buf[:]); err != nil {
			return false, fail(abi.NRTFailure, err, abi.MsgSigSendFailed, int32(bp[parent]))
		}
	}
	return match, nil
}

// broadcastUID is broadcast_unique_id: a non-root rank receives the id and
// the root's verdict from its hypercube parent, then every rank forwards them
// to its children rank+step for each lower step. The verdict a rank returns
// is the root's, never its own.
func broadcastUID(tr transport.Transport, bp []uint32, rank, n int, uid *UniqueID, match bool) (bool, *Error) {
	valid := rank == 0 && match
	mask := cubeMask(rank, n)
	var buf [abi.EncUIDMsgSize]byte
	if mask&rank != 0 {
		parent := cubeParent(rank, mask)
		if err := tr.Recv(int(bp[parent]), buf[:]); err != nil {
			return false, &Error{Status: abi.NRTFailure, Msg: fmt.Sprintf("failed to receive the unique id from %d", bp[parent]), Err: err}
		}
		var got abi.EncUIDMsg
		got.UnmarshalFrom(buf[:])
		*uid, valid = got.ID, got.Valid
	}
	out := abi.EncUIDMsg{ID: *uid, Valid: valid}
	out.MarshalTo(buf[:])
	for step := mask >> 1; step != 0; step >>= 1 {
		if rank+step < n {
			if err := tr.Send(int(bp[rank+step]), buf[:]); err != nil {
				return false, &Error{Status: abi.NRTFailure, Msg: fmt.Sprintf("failed to send the unique id to %d", bp[rank+step]), Err: err}
			}
		}
	}
	return valid, nil
}
