package collectives

import "github.com/nrtabi/nrtabi/generated/abi"

// The two op collectors of the op-signature (contradiction op-projections,
// INFERRED). Hashing a pair set through the replica-group view, or the other
// way round, yields a digest other implementations will not reproduce.

// groupView is update_param_for_signature (vtable +8): the ops posted to
// replica group gi, in queue order; a send's peer resolves through the
// group's participants to the receiver's global id; a collective carries its
// dtype/alg word.
func groupView(c *Context, gi int) ([]opArgs, error) {
	rg := &c.ReplicaGroups[gi]
	var out []opArgs
	for i, op := range c.Ops {
		if op.GroupID != rg.GroupID {
			continue
		}
		a := opArgs{op: op.Kind, sizeN: op.SizeN, peerWord: op.AlgWord}
		if op.Kind == abi.EncSend {
			id, err := resolvePeer(rg.Participants, op, i, "replica group", rg.GroupID)
			if err != nil {
				return nil, err
			}
			a.chID = id
		}
		out = append(out, a)
	}
	return out, nil
}

// pairView is update_param_for_signature_src_tgt_pairs (vtable +16): the ops
// of every replica group linked to pair set si, in queue order; a send's peer
// resolves through the set's own participants; a collective carries the
// resolved peer's global id instead of an algorithm word.
func pairView(c *Context, si int) ([]opArgs, error) {
	stp := &c.SrcTargetPairs[si]
	linked := map[int]bool{}
	for _, rg := range c.ReplicaGroups {
		if rg.SrcTargetPairsID == si {
			linked[rg.GroupID] = true
		}
	}
	var out []opArgs
	for i, op := range c.Ops {
		if !linked[op.GroupID] {
			continue
		}
		a := opArgs{op: op.Kind, sizeN: op.SizeN}
		if op.Kind != abi.EncRecv {
			id, err := resolvePeer(stp.Participants, op, i, "source-target-pair set", si)
			if err != nil {
				return nil, err
			}
			a.chID, a.peerWord = id, uint64(id)
		}
		out = append(out, a)
	}
	return out, nil
}

func resolvePeer(parts []uint32, op Op, i int, kind string, id int) (uint32, error) {
	if op.Peer < 0 || op.Peer >= len(parts) {
		return 0, invalid("op %d (%s, group %d): peer %d is not an index of the %s %d's %d participants", i, op.Kind, op.GroupID, op.Peer, kind, id, len(parts))
	}
	return parts[op.Peer], nil
}
