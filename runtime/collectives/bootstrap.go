package collectives

import (
	"fmt"
	"runtime/cgo"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport"
)

// GetNcclComm is get_nccl_comm: the comm node of replica group rg on device
// dev, context ctx, stream. A pooled node with the same bootstrap participants
// is returned with one more reference (building its graph first if it was
// bootstrapped without one and the caller wants it). Otherwise a node is
// allocated and bootstrapped: the bootstrap root gets the unique id, the
// group's signatures are AND-reduced up a binary tree, the id and the verdict
// are broadcast down a hypercube (on a hierarchical world, both over its
// instances: hierexchange.go), and only a world whose every signature
// matched initialises its comm and meets at the local barrier. Any failure
// frees the node. Every rank of rg calls this at the same time over the
// global comm's bootstrap transport (SetupGlobalComm).
func (r *Runtime) GetNcclComm(rg *ReplicaGroup, dev, ctx, stream int, disableGraph bool) (*CommNode, error) {
	if err := r.checkOpen(); err != nil {
		return nil, err
	}
	if err := checkDevCtx(dev, ctx); err != nil {
		return nil, err
	}
	g := r.slots[dev][ctx].Load()
	if g == nil {
		return nil, invalid("nec_dev %d ctx %d has no global comm: call InitGlobalComm and SetupGlobalComm first", dev, ctx)
	}
	return r.getNcclComm(g, rg, stream, disableGraph, false)
}

func (r *Runtime) getNcclComm(g *GlobalComm, rg *ReplicaGroup, stream int, disableGraph, global bool) (*CommNode, error) {
	boot := g.bootstrap()
	if boot == nil {
		return nil, invalid("nec_dev %d ctx %d has no bootstrap transport: call SetupGlobalComm first", g.dev, g.ctx)
	}
	if err := checkGroup(rg, stream, boot); err != nil {
		return nil, err
	}
	key := string(u32Image(rg.BootstrapParticipants))

	r.poolMtx[g.dev].Lock()
	defer r.poolMtx[g.dev].Unlock()
	pool := r.pool(g.dev, g.ctx, stream)
	if n := pool[key]; n != nil {
		if !disableGraph && n.m.DisableGraph {
			if err := r.comms.BuildGraphComm(n.m.NcclComm); err != nil {
				return nil, fail(abi.NRTFailure, err, abi.MsgNcclRequestFailed, "neuronBuildGraphComm")
			}
			n.m.DisableGraph = false
		}
		n.m.SetRefcnt(n.m.GetRefcnt() + 1)
		return n, nil
	}

	n := r.newNode(g, key, stream, disableGraph, global)
	if n == nil {
		return nil, &Error{Status: abi.NRTFailHostMemAlloc, Msg: "calloc of enc_nccl_comm_node failed"}
	}
	pool[key] = n
	if err := r.bootstrapNode(g, n, rg, boot, disableGraph); err != nil {
		r.freeNodeLocked(n)
		return nil, err
	}
	return n, nil
}

// checkGroup holds rg, with one-line errors, to what get_nccl_comm asserts
// (stream_id < ENC_MAX_STREAM_N, enc.cc:0x29D; rank_n > 0 and
// bootstrap_rank < rank_n, enc.cc:0x114/0x115) and to what the seed does not
// check at all: group_id below ENC_MAX_COMM_N, one bootstrap participant per
// rank, every participant a distinct global device id of the world, and
// bp[bootstrap_rank] this rank's own id (extension pernc-group-checks: each
// would otherwise hang the world on a misaddressed tree or cube message).
func checkGroup(rg *ReplicaGroup, stream int, boot transport.Transport) error {
	if rg == nil {
		return invalid("no replica group given")
	}
	if stream < 0 || stream >= abi.EncMaxStreamN {
		return invalid("group %d: stream_id %d is outside 0..%d (ENC_MAX_STREAM_N)", rg.GroupID, stream, abi.EncMaxStreamN-1)
	}
	if rg.GroupID < 0 || rg.GroupID >= abi.EncMaxCommN {
		return invalid("group_id %d is outside 0..%d (ENC_MAX_COMM_N)", rg.GroupID, abi.EncMaxCommN-1)
	}
	if rg.RankN <= 0 || rg.BootstrapRank < 0 || rg.BootstrapRank >= rg.RankN {
		return invalid("group %d: bootstrap_rank %d is not a rank of rank_n %d", rg.GroupID, rg.BootstrapRank, rg.RankN)
	}
	if len(rg.BootstrapParticipants) != rg.RankN {
		return invalid("group %d: %d bootstrap_participants for rank_n %d; the key is 4 × rank_n bytes", rg.GroupID, len(rg.BootstrapParticipants), rg.RankN)
	}
	seen := make(gidSet, (boot.Size()+63)/64)
	for i, p := range rg.BootstrapParticipants {
		if int(p) >= boot.Size() || seen.has(p) {
			return invalid("group %d: bootstrap_participants[%d] = %d is not a distinct global device id of the world of %d", rg.GroupID, i, p, boot.Size())
		}
		seen[p>>6] |= 1 << (p & 63)
	}
	if me := rg.BootstrapParticipants[rg.BootstrapRank]; int(me) != boot.Rank() {
		return invalid("group %d: bootstrap_participants[%d] = %d, but this rank is global device %d", rg.GroupID, rg.BootstrapRank, me, boot.Rank())
	}
	return nil
}

// bootstrapNode is steps (2)..(5) of get_nccl_comm.
func (r *Runtime) bootstrapNode(g *GlobalComm, n *CommNode, rg *ReplicaGroup, boot transport.Transport, disableGraph bool) error {
	rank, rankN, bp := rg.BootstrapRank, rg.RankN, rg.BootstrapParticipants
	path, xerr := r.groupInit(boot, rg)
	if xerr != nil {
		return r.logged(xerr)
	}
	var uid UniqueID
	var err error
	if rank == 0 {
		switch {
		case path.sc != nil:
			err = path.sc.GetUniqueIDSplit(boot, &uid, rankN, abi.EncUIDHint)
		case path.hc != nil:
			err = path.hc.GetUniqueIDHier(&uid, rankN, path.l, abi.EncUIDHint)
		default:
			err = r.comms.GetUniqueID(&uid, rankN, abi.EncUIDHint)
		}
		if err != nil {
			return r.logged(fail(abi.NRTFailure, err, abi.MsgUIDFailed))
		}
	}
	match, valid, xerr := agree(boot, bp, rank, rankN, agreeShape(boot, bp), rg.Signature, &uid)
	if xerr != nil {
		return r.logged(xerr)
	}
	if r.hooks.gateOnLocalMatch {
		valid = match
	}
	if !valid {
		return r.logged(fail(abi.NRTFailure, nil, abi.MsgSigValidationFailed, g.m.GetGDeviceID()))
	}
	var c uintptr
	switch {
	case path.sc != nil:
		c, err = path.sc.InitCommSplit(boot, rankN, &uid, rank, disableGraph)
	case path.hc != nil:
		c, err = path.hc.InitCommHier(rankN, &uid, rank, path.l, disableGraph)
	default:
		c, err = r.comms.InitComm(rankN, &uid, rank, disableGraph)
	}
	if err != nil {
		return r.logged(fail(abi.NRTFailure, err, abi.MsgInitCommFailed, int32(n.stream), int32(rg.GroupID)))
	}
	n.m.NcclComm = c
	if err := r.setupLocalBarrier(g, n, rg, &uid); err != nil {
		return r.logged(fail(abi.NRTFailure, err, abi.MsgLocalBarrierFailed))
	}
	return nil
}

// setupLocalBarrier fills the node's local-participant view and meets the
// other local participants at the comm's barrier (contradiction local-barrier).
func (r *Runtime) setupLocalBarrier(g *GlobalComm, n *CommNode, rg *ReplicaGroup, uid *UniqueID) error {
	// By now every participant has registered its global comm: the root's
	// verdict, which every rank waited for, needed a message from each.
	here := r.locals.snapshot(g.ctx)
	for _, p := range rg.BootstrapParticipants {
		if here.has(p) {
			n.locals = append(n.locals, p)
		}
	}
	if len(n.locals) == 0 || !here.has(g.m.GetGDeviceID()) {
		return fmt.Errorf("global device %d is not among its own local participants", g.m.GetGDeviceID())
	}
	n.localsC = cbytes(u32Image(n.locals))
	n.leadersC = cbytes(u32Image(n.locals[:1]))
	n.m.SetNumLocalParticipants(uint32(len(n.locals)))
	n.m.LocalParticipants = uintptr(n.localsC)
	n.m.SetNumLocalLeaders(1)
	n.m.LocalLeaders = uintptr(n.leadersC)
	n.m.SetMyLocalLeader(n.locals[0])

	key := string(uid[:])
	b, err := r.barriers.arrive(key, len(n.locals))
	if err != nil {
		return err
	}
	n.barrier, n.barrierKey = b, key
	n.barrierH = cgo.NewHandle(b)
	n.m.LocalBarrier = uintptr(n.barrierH)
	return r.barriers.wait(b, r.barrierTimeout)
}
