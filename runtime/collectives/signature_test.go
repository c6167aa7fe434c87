package collectives

import (
	"crypto/md5"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// p2pContext is one send/recv replica group of two global devices; the
// program of each rank is its end of one point-to-point edge.
func p2pContext(ops ...Op) *Context {
	return &Context{
		ReplicaGroups: []ReplicaGroup{{Rank: abi.EncRgSendrecvRank, RankN: 2, GroupID: 4, SrcTargetPairsID: -1,
			Participants: []uint32{3, 9}, BootstrapParticipants: []uint32{3, 9}}},
		Ops: ops,
	}
}

func TestSendAndMatchingRecvHashAlike(t *testing.T) {
	sender := p2pContext(Op{Kind: abi.EncSend, SizeN: 4096, Peer: 1, GroupID: 4})   // global 3 sends to 9
	receiver := p2pContext(Op{Kind: abi.EncRecv, SizeN: 4096, Peer: 0, GroupID: 4}) // global 9 receives from 3
	if err := Sign(sender, 3); err != nil {
		t.Fatal(err)
	}
	if err := Sign(receiver, 9); err != nil {
		t.Fatal(err)
	}
	if sender.ReplicaGroups[0].Signature != receiver.ReplicaGroups[0].Signature || sender.Signature != receiver.Signature {
		t.Fatalf("the two ends differ: %x / %x", sender.ReplicaGroups[0].Signature, receiver.ReplicaGroups[0].Signature)
	}

	// pinned byte images: participants, then {ENC_SEND u32, size_n u64, 9 u32}
	le := binary.LittleEndian
	var img []byte
	img = le.AppendUint32(img, 3)
	img = le.AppendUint32(img, 9)
	img = le.AppendUint32(img, uint32(abi.EncSend))
	img = le.AppendUint64(img, 4096)
	img = le.AppendUint32(img, 9)
	if len(img) != 8+16 || md5.Sum(img) != sender.ReplicaGroups[0].Signature {
		t.Fatal("the inner digest is not MD5(participants ‖ packed 16-byte send image)")
	}
	if outer := md5.Sum(sender.ReplicaGroups[0].Signature[:]); outer != sender.Signature {
		t.Fatal("the outer digest is not MD5 of the inner digests")
	}

	// hashing the receive literally (the QUIRK's wrong reading) never matches
	lit := le.AppendUint32(img[:8], uint32(abi.EncRecv))
	lit = le.AppendUint64(lit, 4096)
	lit = le.AppendUint32(lit, 0)
	if md5.Sum(lit) == receiver.ReplicaGroups[0].Signature {
		t.Fatal("a literal receive hashes like the canonical one")
	}

	// a receive of another size, or a send to the other device, differs
	other := p2pContext(Op{Kind: abi.EncRecv, SizeN: 4097, Peer: 0, GroupID: 4})
	if err := Sign(other, 9); err != nil || other.Signature == sender.Signature {
		t.Fatalf("size change not seen (%v)", err)
	}
}

func TestCollectiveImageIs20Bytes(t *testing.T) {
	c := p2pContext(Op{Kind: abi.EncAllReduce, SizeN: 1 << 20, AlgWord: 0x0102030405060708, GroupID: 4})
	if err := Sign(c, 3); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	img := le.AppendUint32(nil, 3)
	img = le.AppendUint32(img, 9)
	img = le.AppendUint32(img, uint32(abi.EncAllReduce))
	img = le.AppendUint64(img, 1<<20)
	img = le.AppendUint64(img, 0x0102030405060708)
	if len(img) != 8+20 || md5.Sum(img) != c.ReplicaGroups[0].Signature {
		t.Fatal("the collective image is not {u32 op, u64 size_n, u64 alg word}, packed")
	}
}

func TestSwappingOpsChangesTheDigest(t *testing.T) {
	ops := []Op{
		{Kind: abi.EncAllReduce, SizeN: 1 << 22, AlgWord: 1, GroupID: 4},
		{Kind: abi.EncAllGather, SizeN: 1 << 20, AlgWord: 2, GroupID: 4},
		{Kind: abi.EncSend, SizeN: 512, Peer: 1, GroupID: 4},
	}
	a := p2pContext(ops...)
	b := p2pContext(ops[1], ops[0], ops[2])
	if err := Sign(a, 3); err != nil {
		t.Fatal(err)
	}
	if err := Sign(b, 3); err != nil {
		t.Fatal(err)
	}
	if a.ReplicaGroups[0].Signature == b.ReplicaGroups[0].Signature || a.Signature == b.Signature {
		t.Fatal("swapping two ops left the digest unchanged")
	}
}

func TestOnlySendRecvGroupsAndPairSetsAreSigned(t *testing.T) {
	c := p2pContext(Op{Kind: abi.EncSend, SizeN: 64, Peer: 1, GroupID: 4})
	if err := Sign(c, 3); err != nil {
		t.Fatal(err)
	}
	before := c.Signature
	c.ReplicaGroups = append(c.ReplicaGroups, ReplicaGroup{Rank: 0, RankN: 2, GroupID: 5, SrcTargetPairsID: -1, Participants: []uint32{3, 9}})
	c.Ops = append(c.Ops, Op{Kind: abi.EncAllReduce, SizeN: 8, GroupID: 5})
	if err := Sign(c, 3); err != nil {
		t.Fatal(err)
	}
	if c.Signature != before || c.ReplicaGroups[1].Signature != [16]byte{} {
		t.Fatal("a collective (rank != -1) group entered the signature")
	}

}

// TestNothingToSignIsRefused: where the seed asserts offset > 0
// (enc.cc:0x39FD) — no send/recv group and no source-target-pair set — the
// signature is refused with NRT_INVALID and message sig_nothing_to_sign
// (extension sig-empty-no-assert), the context's digest untouched, through
// Sign and through CalculateSignature; one pair set alone is enough to sign.
func TestNothingToSignIsRefused(t *testing.T) {
	want := cfmt.Sprintf(abi.MsgSigNothingToSign, int32(abi.EncRgSendrecvRank))
	old := [16]byte{0xaa}
	for name, c := range map[string]*Context{
		"no-groups":             {},
		"only-collective-group": {ReplicaGroups: []ReplicaGroup{{Rank: 0, RankN: 1, SrcTargetPairsID: -1}}, Ops: []Op{{Kind: abi.EncAllReduce, SizeN: 8}}},
	} {
		c.Signature = old
		err := Sign(c, 0)
		exactly(t, err, want)
		if Status(err) != abi.NRTInvalid || c.Signature != old {
			t.Errorf("%s: status %d, digest %x: want NRT_INVALID and the old digest", name, Status(err), c.Signature)
		}
	}
	w := newWorld(t, 1, inproc.Options{})
	c := &Context{CCOpOwner: true, Signature: old}
	err := w.rt.CalculateSignature(0, 0, c)
	exactly(t, err, want)
	if c.Signature != old {
		t.Error("CalculateSignature wrote a digest of nothing")
	}
	pairs := &Context{SrcTargetPairs: []SrcTargetPairs{{Pairs: [][]uint32{{0, 1}}}}}
	if err := Sign(pairs, 0); err != nil || pairs.Signature == ([16]byte{}) {
		t.Errorf("one source-target-pair set: %v, digest %x", err, pairs.Signature)
	}
}

func TestOnlyInParseState(t *testing.T) {
	c := p2pContext()
	c.State = abi.EncModelState(2)
	err := Sign(c, 3)
	exactly(t, err, "cannot calculate CC signature: not in parse state (2)")
	if Status(err) != abi.NRTInvalid || c.Signature != [16]byte{} {
		t.Fatal("signed outside the parse state")
	}
}

// pairProgram is a send/recv group linked to a source-target-pair set whose
// own participant list orders the ranks differently from the group's.
func pairProgram() *Context {
	return &Context{
		ReplicaGroups: []ReplicaGroup{{Rank: abi.EncRgSendrecvRank, RankN: 3, GroupID: 0, SrcTargetPairsID: 0, Participants: []uint32{0, 1, 2}}},
		SrcTargetPairs: []SrcTargetPairs{{
			Pairs:        [][]uint32{{0, 1}, {1, 2}, {2, 0}},
			Participants: []uint32{2, 0, 1},
		}},
		Ops: []Op{
			{Kind: abi.EncSend, SizeN: 256, Peer: 1, GroupID: 0},
			{Kind: abi.EncRecv, SizeN: 256, Peer: 2, GroupID: 0},
			{Kind: abi.EncAllGather, SizeN: 64, Peer: 0, AlgWord: 3, GroupID: 0},
		},
	}
}

// The GOTCHA: the pair loop has its own projection; hashing pair sets through
// the replica-group projection gives another digest for the same program.
func TestPairSetsUseTheirOwnProjection(t *testing.T) {
	canonical := pairProgram()
	if err := Sign(canonical, 0); err != nil {
		t.Fatal(err)
	}
	conflated := pairProgram()
	asGroup := func(c *Context, si int) ([]opArgs, error) {
		var out []opArgs
		for gi, rg := range c.ReplicaGroups {
			if rg.SrcTargetPairsID == si {
				ops, err := groupView(c, gi)
				if err != nil {
					return nil, err
				}
				out = append(out, ops...)
			}
		}
		return out, nil
	}
	if err := sign(conflated, 0, asGroup); err != nil {
		t.Fatal(err)
	}
	if canonical.ReplicaGroups[0].Signature != conflated.ReplicaGroups[0].Signature {
		t.Fatal("the replica-group digest must not depend on the pair projection")
	}
	if canonical.SrcTargetPairs[0].Signature == conflated.SrcTargetPairs[0].Signature || canonical.Signature == conflated.Signature {
		t.Fatal("the two projections agree on this program: the pair view is not its own")
	}
	// the pair digest covers the pair vectors
	moved := pairProgram()
	moved.SrcTargetPairs[0].Pairs[2] = []uint32{2, 1}
	if err := Sign(moved, 0); err != nil || moved.SrcTargetPairs[0].Signature == canonical.SrcTargetPairs[0].Signature {
		t.Fatalf("a changed pair vector was not seen (%v)", err)
	}
}

func TestBadPeerIsNamed(t *testing.T) {
	c := p2pContext(Op{Kind: abi.EncSend, SizeN: 1, Peer: 2, GroupID: 4})
	err := Sign(c, 3)
	if Status(err) != abi.NRTInvalid || !strings.Contains(err.Error(), "peer 2") || !strings.Contains(err.Error(), "group 4") {
		t.Fatalf("%v", err)
	}
}

// The whole path on eight ranks: each signs its program with its global id,
// then bootstraps the group; one rank with two ops swapped fails everyone.
func TestSignedProgramBootstrap(t *testing.T) {
	const n = 8
	wd := newWorld(t, n, inproc.Options{})
	program := []Op{
		{Kind: abi.EncAllReduce, SizeN: 4 << 20, AlgWord: 1},
		{Kind: abi.EncReduceScatter, SizeN: 2 << 20, AlgWord: 1},
		{Kind: abi.EncAllGather, SizeN: 1 << 20, AlgWord: 2},
	}
	run := func(swapOn int) []error {
		rgs := groups(identity(n), 1)
		return each(n, func(r int) error {
			ops := append([]Op(nil), program...)
			if r == swapOn {
				ops[1], ops[2] = ops[2], ops[1]
			}
			for i := range ops {
				ops[i].GroupID = 1
			}
			c := &Context{CCOpOwner: true, ReplicaGroups: []ReplicaGroup{*rgs[r]}, Ops: ops}
			if err := wd.rt.CalculateSignature(r, 0, c); err != nil {
				return err
			}
			node, err := wd.rt.GetNcclComm(&c.ReplicaGroups[0], r, 0, 1, false)
			if err == nil {
				// release, or the next run would be a pool hit, which does
				// not validate again
				err = wd.rt.Release(node)
			}
			return err
		})
	}
	noErrors(t, "matching programs", run(-1))
	for r, err := range run(5) {
		exactly(t, err, sigFailed(r))
	}
}

// The gate of enc_calculate_signature (docs/sources.md#s004-4): no
// enc_context, or a driver context that does not own the collective ops,
// returns NRT_SUCCESS before anything is read or hashed — even a context past
// the parse state on a device with no global comm. An owner is checked in the
// seed's order: the parse state first, then the comm.
func TestSignatureGateSkipsNonOwners(t *testing.T) {
	rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
	if err := rt.InitGlobalComm(3, 3, 10, 0, "", true); err != nil {
		t.Fatal(err)
	}
	if err := rt.CalculateSignature(3, 0, nil); err != nil {
		t.Fatalf("no enc_context: %v, want NRT_SUCCESS", err)
	}
	planted := [16]byte{0xde, 0xad}
	for _, tc := range []struct {
		name  string
		dev   int
		state abi.EncModelState
	}{
		{"registered comm, parse state", 3, abi.EncModelParse},
		{"no global comm, not in parse state", 4, abi.EncModelState(2)},
		{"device out of range", abi.NECMaxDevices, abi.EncModelParse},
	} {
		c := p2pContext(Op{Kind: abi.EncSend, SizeN: 4096, Peer: 1, GroupID: 4})
		c.State = tc.state
		c.Signature, c.ReplicaGroups[0].Signature = planted, planted
		if err := rt.CalculateSignature(tc.dev, 0, c); err != nil {
			t.Fatalf("%s: a context that does not own the collective ops: %v, want NRT_SUCCESS", tc.name, err)
		}
		if c.Signature != planted || c.ReplicaGroups[0].Signature != planted {
			t.Fatalf("%s: a context that does not own the collective ops was signed (%x)", tc.name, c.Signature)
		}
	}

	// an owner is signed, and its digests are Sign's
	owner := p2pContext(Op{Kind: abi.EncSend, SizeN: 4096, Peer: 1, GroupID: 4})
	owner.CCOpOwner = true
	if err := rt.CalculateSignature(3, 0, owner); err != nil {
		t.Fatal(err)
	}
	want := p2pContext(Op{Kind: abi.EncSend, SizeN: 4096, Peer: 1, GroupID: 4})
	if err := Sign(want, 3); err != nil || owner.Signature != want.Signature {
		t.Fatalf("owner signed %x, Sign gives %x (%v)", owner.Signature, want.Signature, err)
	}
	// the parse state is checked before the global comm is looked up
	late := p2pContext()
	late.CCOpOwner, late.State = true, abi.EncModelState(2)
	exactly(t, rt.CalculateSignature(4, 0, late), "cannot calculate CC signature: not in parse state (2)")
}
