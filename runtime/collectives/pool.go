package collectives

import (
	"encoding/binary"
	"runtime/cgo"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// CommNode is one enc_nccl_comm_node: the libnccom comm shared by every
// replica group of a device, context and stream whose bootstrap participants
// are byte-for-byte the same. Its fields live in C memory (Mirror).
type CommNode struct {
	m                *abi.EncNcclCommNode // calloc(1, 0x58), or inline in the global comm
	dev, ctx, stream int
	key              string   // the pool key: the byte image of bootstrap_participants
	locals           []uint32 // local participants (global ids), also at m.LocalParticipants
	global           bool     // the global comm's own node (m is inside enc_glb_comm)

	keyC, localsC, leadersC unsafe.Pointer
	barrier                 *localBarrier
	barrierKey              string
	barrierH                cgo.Handle
	freed                   bool // under poolMtx[dev]
}

// Mirror is the node as C sees it.
func (n *CommNode) Mirror() *abi.EncNcclCommNode { return n.m }

// Comm is the libnccom comm handle (nccl_comm).
func (n *CommNode) Comm() uintptr { return n.m.NcclComm }

// Key is the pool key: 4 × rank_n bytes, little-endian u32 per participant.
func (n *CommNode) Key() []byte { return []byte(n.key) }

// LocalParticipants are the node's participants living in this process.
func (n *CommNode) LocalParticipants() []uint32 { return append([]uint32(nil), n.locals...) }

// u32Image is the little-endian byte image of v (a std::vector<u32>'s bytes).
func u32Image(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// newNode is the allocation step of get_nccl_comm: key copied, refcount 1,
// context and stream recorded. The global node's memory is the global comm's
// inline nccl_comm_node.
func (r *Runtime) newNode(g *GlobalComm, key string, stream int, disableGraph, global bool) *CommNode {
	n := &CommNode{dev: g.dev, ctx: g.ctx, stream: stream, key: key, global: global}
	if global {
		n.m = &g.m.NcclCommNode
		*n.m = abi.EncNcclCommNode{}
		n.m.GlobalNcclCommNode = true
	} else if n.m = newCommNodeMirror(); n.m == nil {
		return nil
	}
	n.keyC = cbytes([]byte(key))
	n.m.Key = uintptr(n.keyC)
	n.m.SetKeySz(uint64(len(key)))
	n.m.SetRefcnt(1)
	// The Go node records the context (n.ctx) in every release; the C node
	// only where its release has context_id (docs/generator.md#absent-fields).
	if n.m.HasContextID() {
		n.m.SetContextID(uint32(g.ctx))
	}
	n.m.SetStreamID(uint32(stream))
	n.m.DisableGraph = disableGraph
	return n
}

func (r *Runtime) pool(dev, ctx, stream int) map[string]*CommNode {
	p := r.pools[dev][ctx][stream]
	if p == nil {
		p = map[string]*CommNode{}
		r.pools[dev][ctx][stream] = p
	}
	return p
}

// Pooled is find_nccl_comm_node without side effects: the node of
// (dev, ctx, stream) keyed by these bootstrap participants, or nil.
func (r *Runtime) Pooled(dev, ctx, stream int, bootstrapParticipants []uint32) *CommNode {
	if checkDevCtx(dev, ctx) != nil || stream < 0 || stream >= abi.EncMaxStreamN {
		return nil
	}
	r.poolMtx[dev].Lock()
	defer r.poolMtx[dev].Unlock()
	return r.pools[dev][ctx][stream][string(u32Image(bootstrapParticipants))]
}

// Refcnt is the node's reference count.
func (r *Runtime) Refcnt(n *CommNode) int {
	r.poolMtx[n.dev].Lock()
	defer r.poolMtx[n.dev].Unlock()
	if n.freed {
		return 0
	}
	return int(n.m.GetRefcnt())
}

// Release drops one reference; the last one frees the node and its comm.
// The global comm's node keeps its last reference until DestroyGlobalComm.
func (r *Runtime) Release(n *CommNode) error {
	r.poolMtx[n.dev].Lock()
	defer r.poolMtx[n.dev].Unlock()
	if n.freed {
		return invalid("comm node of nec_dev %d ctx %d stream %d was already freed", n.dev, n.ctx, n.stream)
	}
	if n.global && n.m.GetRefcnt() <= 1 {
		return invalid("the global comm's node of nec_dev %d ctx %d is released by DestroyGlobalComm, not Release", n.dev, n.ctx)
	}
	n.m.SetRefcnt(n.m.GetRefcnt() - 1)
	if n.m.GetRefcnt() <= 0 {
		r.freeNodeLocked(n)
	}
	return nil
}

// freeNodeLocked is free_nccl_comm_node: out of the pool, comm freed, barrier
// left, C memory released. The caller holds poolMtx[n.dev].
func (r *Runtime) freeNodeLocked(n *CommNode) {
	if n.freed {
		return
	}
	n.freed = true
	if p := r.pools[n.dev][n.ctx][n.stream]; p[n.key] == n {
		delete(p, n.key)
	}
	if c := n.m.NcclComm; c != 0 {
		if err := r.comms.FreeComm(c); err != nil {
			r.log.Error("free comm", "nec_dev", n.dev, "ctx", n.ctx, "stream", n.stream, "err", err)
		}
	}
	if n.barrier != nil {
		r.barriers.leave(n.barrierKey, n.barrier)
		n.barrierH.Delete()
		n.barrier = nil
	}
	cfree(n.keyC)
	cfree(n.localsC)
	cfree(n.leadersC)
	n.keyC, n.localsC, n.leadersC = nil, nil, nil
	if n.global {
		*n.m = abi.EncNcclCommNode{}
	} else {
		cfree(unsafe.Pointer(n.m))
	}
}
