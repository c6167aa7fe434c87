package collectives

import (
	"crypto/md5"
	"hash"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// Op is one posted collective op of a function's op queue, as far as the
// op-signature reads it.
type Op struct {
	Kind    abi.EncOp
	SizeN   uint64
	Peer    int    // a send's (or a pair-view collective's) peer: an index into the viewing group's participants
	AlgWord uint64 // the dtype/algorithm word after peer (collectives, replica-group view)
	GroupID int    // the replica group the op is posted to
}

// ReplicaGroup is enc_replica_group_info as the bootstrap and the signature use it.
type ReplicaGroup struct {
	Rank                  int // abi.EncRgSendrecvRank (-1) for send/recv groups
	RankN                 int
	GroupID               int // < ENC_MAX_COMM_N
	SrcTargetPairsID      int // index of the group's source-target-pair set, -1 for none
	Participants          []uint32
	BootstrapParticipants []uint32 // the comm-pool key
	BootstrapRank         int      // this rank's index in BootstrapParticipants
	NumOps                uint32   // ops posted to the group; 0: the comm is bootstrapped but not bound (nccl_init_comm)
	Signature             [16]byte // written by Sign for send/recv groups
}

// SrcTargetPairs is enc_src_target_pairs_info.
type SrcTargetPairs struct {
	Pairs        [][]uint32 // each pair vector: global device ids
	Participants []uint32
	Signature    [16]byte
}

// Context is the part of enc_context the op-signature reads and writes, with
// the one flag of the driver context (encd_context) that gates it.
type Context struct {
	// CCOpOwner is drv_ctx->ccop_owner: whether this driver context owns
	// the collective ops. A context that does not is not signed at all
	// (CalculateSignature returns success before any hashing,
	// docs/sources.md#s004-4), so its signatures stay as they were.
	CCOpOwner      bool
	State          abi.EncModelState
	ReplicaGroups  []ReplicaGroup
	SrcTargetPairs []SrcTargetPairs
	Ops            []Op     // the op queue, in posting order
	Signature      [16]byte // enc_context+992
}

// CalculateSignature is enc_calculate_signature (docs/sources.md#s004-4) for
// the device's global comm, in the seed's order: a missing enc_context (c
// nil) or a driver context that does not own the collective ops
// (!c.CCOpOwner) returns NRT_SUCCESS before anything is read or hashed; a
// context past the parse state is refused with the seed's message; then c
// is signed with the comm's g_device_id. The seed dereferences the global
// comm without a check; a device, context or comm that does not exist is
// refused here with a one-line error instead.
func (r *Runtime) CalculateSignature(dev, ctx int, c *Context) error {
	if c == nil || !c.CCOpOwner {
		return nil
	}
	if c.State != abi.EncModelParse {
		return r.logged(fail(abi.NRTInvalid, nil, abi.MsgSigNotParseState, int32(c.State)))
	}
	if err := checkDevCtx(dev, ctx); err != nil {
		return err
	}
	g := r.slots[dev][ctx].Load()
	if g == nil {
		return invalid("nec_dev %d ctx %d has no global comm: call InitGlobalComm first", dev, ctx)
	}
	if err := Sign(c, g.m.GetGDeviceID()); err != nil {
		if e, ok := err.(*Error); ok {
			return r.logged(e)
		}
		return err
	}
	return nil
}

// Sign computes the two-level op-signature of c as rank gDeviceID: an inner
// MD5 per send/recv replica group (its participants, then its ops through the
// replica-group view) and per source-target-pair set (its pair vectors, then
// its ops through the pair view), each written to the group's Signature; then
// an outer MD5 over the inner digests in that order, written to c.Signature.
// It runs only in the parse state. Sign is the hashing alone: it signs c
// whatever c.CCOpOwner says (the gate is CalculateSignature's).
func Sign(c *Context, gDeviceID uint32) error {
	return sign(c, gDeviceID, pairView)
}

// view is an op collector: the op args of one group kind, projected.
type view func(c *Context, owner int) ([]opArgs, error)

func sign(c *Context, gid uint32, pairs view) error {
	if c.State != abi.EncModelParse {
		return fail(abi.NRTInvalid, nil, abi.MsgSigNotParseState, int32(c.State))
	}
	scratch := make([]byte, 0, 16*(len(c.ReplicaGroups)+len(c.SrcTargetPairs)))
	for i := range c.ReplicaGroups {
		rg := &c.ReplicaGroups[i]
		if rg.Rank != abi.EncRgSendrecvRank {
			continue
		}
		ops, err := groupView(c, i)
		if err != nil {
			return err
		}
		h := md5.New()
		h.Write(u32Image(rg.Participants))
		for _, a := range ops {
			md5OpArgs(h, a, gid)
		}
		h.Sum(rg.Signature[:0])
		scratch = append(scratch, rg.Signature[:]...)
	}
	for i := range c.SrcTargetPairs {
		stp := &c.SrcTargetPairs[i]
		ops, err := pairs(c, i)
		if err != nil {
			return err
		}
		h := md5.New()
		for _, vec := range stp.Pairs {
			h.Write(u32Image(vec))
		}
		for _, a := range ops {
			md5OpArgs(h, a, gid)
		}
		h.Sum(stp.Signature[:0])
		scratch = append(scratch, stp.Signature[:]...)
	}
	if len(scratch) == 0 {
		// The seed asserts offset > 0 here (enc.cc:0x39FD); a program
		// with nothing to sign is refused instead (extension
		// sig-empty-no-assert).
		return fail(abi.NRTInvalid, nil, abi.MsgSigNothingToSign, int32(abi.EncRgSendrecvRank))
	}
	c.Signature = md5.Sum(scratch)
	return nil
}

// opArgs is what md5_enc_op_args reads of one op, after a view projected it.
type opArgs struct {
	op       abi.EncOp
	sizeN    uint64
	chID     uint32 // permute_ring_ch_id (sends)
	peerWord uint64 // the word after peer (collectives)
}

// md5OpArgs is md5_enc_op_args: a send hashes {ENC_SEND, size_n, channel},
// a receive is canonicalised to {ENC_SEND, size_n, g_device_id} so the two
// ends of a point-to-point edge hash alike, and a collective hashes
// {enc_op, size_n, word after peer} (20 bytes). The images are the spec's
// packed structs.
func md5OpArgs(h hash.Hash, a opArgs, gid uint32) {
	switch a.op {
	case abi.EncSend:
		var b [16]byte
		img := abi.EncSigSendImage{Op: uint32(abi.EncSend), SizeN: a.sizeN, PermuteRingChID: a.chID}
		img.MarshalTo(b[:])
		h.Write(b[:])
	case abi.EncRecv:
		var b [16]byte
		img := abi.EncSigRecvImage{Op: uint32(abi.EncSend), SizeN: a.sizeN, GDeviceID: gid}
		img.MarshalTo(b[:])
		h.Write(b[:])
	default:
		var b [20]byte
		img := abi.EncSigCollImage{Op: uint32(a.op), SizeN: a.sizeN, PeerAlg: a.peerWord}
		img.MarshalTo(b[:])
		h.Write(b[:])
	}
}
