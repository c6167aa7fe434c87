package collectives

import (
	"fmt"
	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport"
)

// SetupGlobalComm is enc_setup_global_comm, the second gate. The first call on
// a comm binds boot as its bootstrap socket (boot's ranks are the world's
// global device ids; in libnrt it is the comm neuronInitGlobalComm built),
// bootstraps the global replica group's comm node over it (every rank of the
// world takes part; the node's nccl_comm is then that group's own
// neuronInitComm comm, not boot: contradiction global-comm-bootstrap-socket)
// and allocates the local ring tables; every call then asserts the
// post-bootstrap invariants (enc.cc:0x3E5F..0x3E62).
func (r *Runtime) SetupGlobalComm(dev, ctx int, boot transport.Transport) error {
	if err := r.checkOpen(); err != nil {
		return err
	}
	if err := checkDevCtx(dev, ctx); err != nil {
		return err
	}
	r.setupMtx[dev].Lock()
	defer r.setupMtx[dev].Unlock()
	g := r.slots[dev][ctx].Load()
	if g == nil {
		return invalid("nec_dev %d ctx %d has no global comm: call InitGlobalComm first", dev, ctx)
	}
	if g.Node() == nil {
		if err := r.setupInternal(g, boot); err != nil {
			return err
		}
	}
	return g.checkInvariants()
}

// globalGroup is the replica group of the whole world, as this rank sees it.
func globalGroup(gid, n uint32) *ReplicaGroup {
	parts := make([]uint32, n)
	for i := range parts {
		parts[i] = uint32(i)
	}
	return &ReplicaGroup{Rank: int(gid), RankN: int(n), SrcTargetPairsID: -1, Participants: parts, BootstrapParticipants: parts, BootstrapRank: int(gid)}
}

func (r *Runtime) setupInternal(g *GlobalComm, boot transport.Transport) error {
	gid, n := g.m.GetGDeviceID(), g.m.GetGDeviceCnt()
	if boot == nil {
		return invalid("nec_dev %d ctx %d: no bootstrap transport given", g.dev, g.ctx)
	}
	if boot.Rank() != int(gid) || boot.Size() != int(n) {
		return invalid("nec_dev %d ctx %d: the bootstrap transport is rank %d of %d, the global comm is g_device_id %d of %d; give this rank's endpoint of the world", g.dev, g.ctx, boot.Rank(), boot.Size(), gid, n)
	}
	g.mu.Lock()
	g.boot = boot
	g.mu.Unlock()

	node, err := r.getNcclComm(g, globalGroup(gid, n), 0, false, true)
	if err != nil {
		return err
	}
	rank, rankN, err := r.comms.CommInfo(uintptr(node.m.NcclComm))
	if err != nil {
		return fail(abi.NRTFailure, err, abi.MsgNcclRequestFailed, "neuronGetCommInfo")
	}
	// The bananaphone IPC rings themselves are not this package's: the global
	// comm gets one ring slot and one peer handle (the peer's global id) per
	// local participant, which is what its invariants and consumers index.
	rings := calloc(uintptr(8 * len(node.locals)))
	peers := cbytes(u32Image(node.locals))
	g.mu.Lock()
	g.node, g.ciRank, g.ciN = node, rank, rankN
	g.rings, g.peers = rings, peers
	g.m.LocalRings, g.m.LocalPeerHandles = uintptr(rings), uintptr(peers)
	g.mu.Unlock()
	return nil
}

// checkInvariants asserts that the global identity and the libnccom view agree.
func (g *GlobalComm) checkInvariants() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case int(g.m.GetGDeviceID()) != g.ciRank:
		return g.broken("g_device_id %d != comm.ci.rank %d (enc.cc:0x3E5F)", g.m.GetGDeviceID(), g.ciRank)
	case int(g.m.GetGDeviceCnt()) != g.ciN:
		return g.broken("g_device_cnt %d != comm.ci.rank_n %d (enc.cc:0x3E60)", g.m.GetGDeviceCnt(), g.ciN)
	case g.m.LocalRings == 0:
		return g.broken("local_rings is NULL (enc.cc:0x3E61)")
	case g.m.LocalPeerHandles == 0:
		return g.broken("local_peer_handles is NULL (enc.cc:0x3E62)")
	}
	return nil
}

func (g *GlobalComm) broken(format string, args ...any) error {
	return &Error{Status: abi.NRTFailure, Msg: fmt.Sprintf("nec_dev %d ctx %d: global comm invariant broken: ", g.dev, g.ctx) + fmt.Sprintf(format, args...)}
}
