package collectives

import (
	"sync/atomic"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// NcclInitComm is nccl_init_comm (docs/sources.md#s004-5): the stream of comm commID is
// stream_id_map[commID] of the C enc_context ec, the replica group rg gets its
// comm node on that stream (GetNcclComm), and only when rg has ops is comm —
// the C enc_comm the op compiler reads — bound to it: comm->{id, stream_id}
// become {commID, stream} in one 8-byte store at +80, so a reader of the pair
// never sees one half new and the other old. A group with no ops keeps its
// comm node (it takes part in barriers) and leaves comm untouched.
// nccl_setup_comm's chunk sizing, which the original runs between the two, is
// the op compiler's and not modelled here.
func (r *Runtime) NcclInitComm(ec *abi.EncContext, comm *abi.EncComm, commID int, rg *ReplicaGroup, dev, ctx int, disableGraph bool) (*CommNode, error) {
	if ec == nil || comm == nil {
		return nil, invalid("nccl_init_comm: enc_context %p, enc_comm %p: both must be given", ec, comm)
	}
	if commID < 0 || commID >= len(ec.StreamIDMap) {
		return nil, invalid("nccl_init_comm: comm_id %d is outside enc_context.stream_id_map (0..%d)", commID, len(ec.StreamIDMap)-1)
	}
	if uintptr(unsafe.Pointer(&comm.ID))%8 != 0 {
		return nil, invalid("nccl_init_comm: enc_comm %p is not 8-byte aligned; {id, stream_id} at +80 cannot be one 8-byte store", comm)
	}
	stream := ec.StreamIDMap[commID]
	if stream == abi.EncStreamIDUninitialized {
		return nil, r.logged(invalid("nccl_init_comm: stream_id_map[%d] is ENC_STREAM_ID_UNINITIALIZED (enc.cc:0x68C): assign comm %d a stream below %d before its replica group is initialised", commID, commID, abi.EncMaxStreamN))
	}
	if stream >= uint32(abi.EncMaxStreamN) {
		return nil, r.logged(invalid("nccl_init_comm: stream_id_map[%d] = %d is not a stream below ENC_MAX_STREAM_N (%d)", commID, stream, abi.EncMaxStreamN))
	}
	n, err := r.GetNcclComm(rg, dev, ctx, int(stream), disableGraph)
	if err != nil {
		return nil, err
	}
	if rg.NumOps > 0 || r.hooks.bindWithoutOps {
		if r.hooks.splitBinding != nil {
			comm.SetID(int32(commID))
			r.hooks.splitBinding()
			comm.SetStreamID(stream)
		} else {
			bindComm(comm, int32(commID), stream)
		}
	}
	return n, nil
}

// bindComm writes comm->{id, stream_id} as the one packed 8-byte store of
// nccl_init_comm: id in the low half (+80), stream_id in the high half (+84),
// little-endian as on every target of the spec.
func bindComm(comm *abi.EncComm, id int32, stream uint32) {
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&comm.ID)), uint64(uint32(id))|uint64(stream)<<32)
}

// CommBinding reads comm->{id, stream_id} with one 8-byte load, the way a
// concurrent reader of the pair sees it.
func CommBinding(comm *abi.EncComm) (id int32, stream uint32) {
	v := atomic.LoadUint64((*uint64)(unsafe.Pointer(&comm.ID)))
	return int32(uint32(v)), uint32(v >> 32)
}
