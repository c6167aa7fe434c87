package collectives

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

var worldSizes = []int{1, 2, 3, 4, 5, 7, 8, 13, 64, 256}

// expectedTrace is every message of one bootstrap: N-1 signature messages,
// bootstrap rank i to its tree parent, and N-1 id messages, from i's
// hypercube parent (i minus its lowest set bit) to i, in global device ids.
func expectedTrace(bp []uint32) []inproc.Message {
	var out []inproc.Message
	for i := 1; i < len(bp); i++ {
		out = append(out,
			inproc.Message{Src: int(bp[i]), Dst: int(bp[(i-1)/2]), Size: int(abi.EncSigMsgSize)},
			inproc.Message{Src: int(bp[i-i&-i]), Dst: int(bp[i]), Size: int(abi.EncUIDMsgSize)})
	}
	return sortTrace(out)
}

func sortTrace(m []inproc.Message) []inproc.Message {
	slices.SortFunc(m, func(a, b inproc.Message) int {
		if a.Size != b.Size {
			return a.Size - b.Size
		}
		if a.Src != b.Src {
			return a.Src - b.Src
		}
		return a.Dst - b.Dst
	})
	return m
}

// mismatchSites are the ranks a bad signature is planted at: the root, an
// inner node, a leaf and the last rank (deduplicated for small worlds).
func mismatchSites(n int) map[string]int {
	s := map[string]int{"root": 0, "last rank": n - 1}
	if n >= 4 {
		s["inner node"] = 1 // children 3 and 4 exist or 3 does
	}
	if leaf := n / 2; leaf > 0 && leaf != n-1 {
		s["leaf"] = leaf // 2*leaf+1 >= n
	}
	return s
}

func TestBootstrapWorlds(t *testing.T) {
	for _, n := range worldSizes {
		t.Run(fmt.Sprint("N=", n), func(t *testing.T) {
			wd := newWorld(t, n, inproc.Options{Trace: true})
			bp := shuffled(n, uint64(n))
			initsBefore := wd.comms.Stats().Inits

			// a matching world: everyone bootstraps, exact messages
			rgs := groups(bp, 3)
			nodes, errs := wd.bootstrap(rgs, 1, false)
			noErrors(t, "bootstrap", errs)
			if got, want := sortTrace(wd.w.Trace()), expectedTrace(bp); !slices.Equal(got, want) {
				t.Fatalf("messages\n got %v\nwant %v", got, want)
			}
			st := wd.w.Stats()
			if st.BySize[int(abi.EncSigMsgSize)] != n-1 || st.BySize[int(abi.EncUIDMsgSize)] != n-1 || st.Messages != int64(2*(n-1)) {
				t.Fatalf("counts %+v, want %d × 17 B and %d × 129 B", st, n-1, n-1)
			}
			t.Logf("N=%d: %d × %d B up the tree (%d rounds), %d × %d B down the cube (%d rounds), %d B in all",
				n, st.BySize[int(abi.EncSigMsgSize)], abi.EncSigMsgSize, TreeRounds(n), st.BySize[int(abi.EncUIDMsgSize)], abi.EncUIDMsgSize, CubeRounds(n), st.Bytes)
			if inits := wd.comms.Stats().Inits - initsBefore; inits != int64(n) {
				t.Fatalf("%d comm inits, want %d", inits, n)
			}
			for r, node := range nodes {
				m := node.Mirror()
				if m.GetRefcnt() != 1 || m.GetStreamID() != 1 || contextID(m) != 0 || m.NcclComm == 0 || m.GetKeySz() != uint64(4*n) ||
					m.GetNumLocalParticipants() != uint32(n) || m.GetMyLocalLeader() != bp[0] || m.LocalBarrier == 0 || m.GlobalNcclCommNode {
					t.Fatalf("rank %d node %+v", r, *m)
				}
				if string(node.Key()) != string(u32Image(bp)) {
					t.Fatalf("rank %d: key is not the byte image of bootstrap_participants", r)
				}
			}
			for _, node := range nodes {
				if err := wd.rt.Release(node); err != nil {
					t.Fatal(err)
				}
			}

			// a mismatch anywhere: every rank fails with the exact message,
			// none initialises, no node survives, the messages are the same
			for site, bad := range mismatchSites(n) {
				if n == 1 {
					break // one rank cannot disagree with itself
				}
				wd.w.ResetStats()
				initsBefore := wd.comms.Stats().Inits
				rgs := groups(bp, 3)
				rgs[bp[bad]].Signature[5] ^= 0x40
				_, errs := wd.bootstrap(rgs, 1, false)
				for gid, err := range errs {
					if err == nil {
						t.Fatalf("mismatch at %s (bootstrap rank %d): global device %d bootstrapped", site, bad, gid)
					}
					exactly(t, err, sigFailed(gid))
				}
				if inits := wd.comms.Stats().Inits - initsBefore; inits != 0 {
					t.Fatalf("mismatch at %s: %d ranks reached comm init", site, inits)
				}
				if got := sortTrace(wd.w.Trace()); !slices.Equal(got, expectedTrace(bp)) {
					t.Fatalf("mismatch at %s: messages %v", site, got)
				}
				for gid := 0; gid < n; gid++ {
					if wd.rt.Pooled(gid, 0, 1, bp) != nil {
						t.Fatalf("mismatch at %s: device %d kept its node", site, gid)
					}
				}
			}
		})
	}
}

// The planted fault the GOTCHA warns of: a rank that trusts its own compare
// reaches comm init in a world that disagrees. The mismatch test catches it.
func TestLocalCompareIsNotEnough(t *testing.T) {
	wd := newWorld(t, 7, inproc.Options{})
	wd.rt.hooks.gateOnLocalMatch = true
	wd.rt.barrierTimeout = 100e6 // the ranks let through wait for the others in vain
	rgs := groups(identity(7), 0)
	rgs[6].Signature[0] ^= 1 // under rank 2; ranks 1, 3, 4 match locally
	wd.bootstrap(rgs, 1, false)
	if inits := wd.comms.Stats().Inits - 7; inits == 0 {
		t.Fatal("the planted local-compare gate let no rank through; the none-initialises check could not see it")
	}
}

func TestPoolSharesNodesByBootstrapParticipants(t *testing.T) {
	wd := newWorld(t, 4, inproc.Options{})
	bp := []uint32{2, 0, 3, 1}
	a := groups(bp, 1)
	nodes, errs := wd.bootstrap(a, 2, true) // graph bypassed
	noErrors(t, "first", errs)
	if !nodes[0].Mirror().DisableGraph || !wd.comms.GraphPending(nodes[0].Comm()) {
		t.Fatal("a bypassed graph is not pending")
	}
	msgs := wd.w.Stats().Messages

	// another group, other logical participants, same bootstrap participants:
	// a pool hit on every rank, no messages, the graph built on request
	b := groups(bp, 5)
	for _, rg := range b {
		rg.Participants = []uint32{9, 9, 9, 9}
	}
	for gid := 0; gid < 4; gid++ {
		n, err := wd.rt.GetNcclComm(b[gid], gid, 0, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		if n != nodes[gid] || wd.rt.Refcnt(n) != 2 || n.Mirror().DisableGraph || wd.comms.GraphPending(n.Comm()) {
			t.Fatalf("device %d: hit %v refcnt %d graph pending %v", gid, n == nodes[gid], wd.rt.Refcnt(n), n.Mirror().DisableGraph)
		}
	}
	if wd.w.Stats().Messages != msgs || wd.comms.Stats().GraphBuilds != 4 {
		t.Fatalf("hits sent messages or built %d graphs", wd.comms.Stats().GraphBuilds)
	}
	// a hit that does not ask for the graph does not build it again
	if n, err := wd.rt.GetNcclComm(b[0], 0, 0, 2, true); err != nil || n != nodes[0] || wd.comms.Stats().GraphBuilds != 4 {
		t.Fatalf("hit without graph: %v", err)
	}

	// another stream is another pool
	if wd.rt.Pooled(0, 0, 3, bp) != nil || wd.rt.Pooled(0, 0, 2, bp) != nodes[0] {
		t.Fatal("pools are not per stream")
	}

	// releases: the last reference frees the node and its comm
	for _, want := range []int{2, 1, 0} {
		if err := wd.rt.Release(nodes[0]); err != nil {
			t.Fatal(err)
		}
		if got := wd.rt.Refcnt(nodes[0]); got != want {
			t.Fatalf("refcnt %d, want %d", got, want)
		}
	}
	if wd.rt.Pooled(0, 0, 2, bp) != nil {
		t.Fatal("a freed node is still pooled")
	}
	if err := wd.rt.Release(nodes[0]); Status(err) != abi.NRTInvalid {
		t.Fatalf("double release: %v", err)
	}
	if err := wd.rt.Release(wd.rt.GlobalComm(0, 0).Node()); Status(err) != abi.NRTInvalid {
		t.Fatalf("releasing the global node: %v", err)
	}
}

func TestGroupArgumentsAreChecked(t *testing.T) {
	wd := newWorld(t, 2, inproc.Options{})
	good := func() *ReplicaGroup { return groups(identity(2), 0)[0] }
	for name, tc := range map[string]struct {
		rg     func() *ReplicaGroup
		stream int
	}{
		"stream":         {good, abi.EncMaxStreamN},
		"group id":       {func() *ReplicaGroup { g := good(); g.GroupID = abi.EncMaxCommN; return g }, 0},
		"rank":           {func() *ReplicaGroup { g := good(); g.BootstrapRank = 2; return g }, 0},
		"short key":      {func() *ReplicaGroup { g := good(); g.BootstrapParticipants = []uint32{0}; return g }, 0},
		"unknown device": {func() *ReplicaGroup { g := good(); g.BootstrapParticipants = []uint32{0, 7}; return g }, 0},
		"duplicate":      {func() *ReplicaGroup { g := good(); g.BootstrapParticipants = []uint32{0, 0}; return g }, 0},
		"not me":         {func() *ReplicaGroup { g := good(); g.BootstrapRank = 1; return g }, 0},
	} {
		_, err := wd.rt.GetNcclComm(tc.rg(), 0, 0, tc.stream, false)
		if Status(err) != abi.NRTInvalid {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if wd.w.Stats().Messages != 0 {
		t.Fatal("a refused group sent messages")
	}
	if _, err := wd.rt.GetNcclComm(good(), 9, 0, 0, false); Status(err) != abi.NRTInvalid {
		t.Fatalf("device without a comm: %v", err)
	}
}

func TestUniqueIDFailure(t *testing.T) {
	wd := newWorld(t, 8, inproc.Options{})
	wd.closeOnFail = true
	wd.comms.FailUniqueID = errors.New("no listening interface")
	_, errs := wd.bootstrap(groups(shuffled(8, 1), 0), 1, false)
	exactly(t, errs[shuffled(8, 1)[0]], abi.MsgUIDFailed)
	for gid, err := range errs {
		if err == nil {
			t.Fatalf("device %d bootstrapped without a unique id", gid)
		}
	}
	if wd.comms.Stats().Inits != 8 { // the global comm's only
		t.Fatal("a rank initialised a comm")
	}
	if wd.rt.Stats().CommNodes != 8 {
		t.Fatalf("%d nodes, want only the 8 global ones", wd.rt.Stats().CommNodes)
	}
}

func TestInitCommFailureFreesEveryNode(t *testing.T) {
	wd := newWorld(t, 4, inproc.Options{})
	wd.rt.barrierTimeout = 200e6
	wd.comms.FailInit = func(rank int) error {
		if rank == 2 {
			return errors.New("planted")
		}
		return nil
	}
	_, errs := wd.bootstrap(groups(identity(4), 0), 1, false)
	exactly(t, errs[2], "failed to init NCCL comm stream_id:1 group_id:0")
	for gid, err := range errs {
		if gid != 2 {
			exactly(t, err, abi.MsgLocalBarrierFailed)
		}
	}
	if s := wd.rt.Stats(); s.CommNodes != 4 {
		t.Fatalf("%d nodes left, want the 4 global ones", s.CommNodes)
	}
	if live := wd.comms.Stats().Live; live != 4 {
		t.Fatalf("%d comms live, want the 4 global ones", live)
	}
}

// The rounds are logarithmic: the tree depth and the cube dimension.
func TestRounds(t *testing.T) {
	for _, tc := range []struct{ n, tree, cube int }{{1, 0, 0}, {2, 1, 1}, {3, 1, 2}, {4, 2, 2}, {8, 3, 3}, {13, 3, 4}, {16, 4, 4}, {256, 8, 8}} {
		if TreeRounds(tc.n) != tc.tree || CubeRounds(tc.n) != tc.cube {
			t.Fatalf("N=%d: rounds %d/%d, want %d/%d", tc.n, TreeRounds(tc.n), CubeRounds(tc.n), tc.tree, tc.cube)
		}
	}
	// every non-root rank's cube parent is below it and the fan-out reaches it once
	for _, n := range worldSizes {
		got := make([]int, n)
		for r := 0; r < n; r++ {
			mask := cubeMask(r, n)
			for step := mask >> 1; step != 0; step >>= 1 {
				if r+step < n {
					got[r+step]++
				}
			}
		}
		for r := 1; r < n; r++ {
			if got[r] != 1 {
				t.Fatalf("N=%d: rank %d receives the id %d times", n, r, got[r])
			}
		}
	}
}

// libncomStatus is an NRT_STATUS as a forward call returns it (runtime/nrt's
// CallError carries one the same way).
type libncomStatus uint32

func (s libncomStatus) Error() string { return fmt.Sprintf("neuronInitComm: status %d", uint32(s)) }

// Row 5 of docs/seed-fidelity.md#table (contradiction
// init-status-invalid-argument), Go side: libnccom's core answers a bad rank with
// ncclInvalidArgument (4) and its wrapper passes that through as the
// NRT_STATUS (docs/sources.md#s001-2), which libnrt reads as NRT_RESOURCE.
// get_nccl_comm frees the node and reports its own failure; the status
// libnccom returned stays in the error chain exactly, not mapped to
// NRT_INVALID (2) or anything else.
func TestLibnccomStatusPassesThrough(t *testing.T) {
	wd := newWorld(t, 4, inproc.Options{})
	wd.rt.barrierTimeout = 200e6
	wd.comms.FailInit = func(rank int) error {
		if rank == 1 {
			return libncomStatus(abi.NcclInvalidArgument)
		}
		return nil
	}
	_, errs := wd.bootstrap(groups(identity(4), 0), 1, false)
	exactly(t, errs[1], "failed to init NCCL comm stream_id:1 group_id:0")
	var st libncomStatus
	if !errors.As(errs[1], &st) || uint32(st) != uint32(abi.NcclInvalidArgument) || abi.NRTStatus(st) != abi.NRTResource {
		t.Fatalf("libnccom's status did not come through unchanged: %v", errs[1])
	}
	if Status(errs[1]) != abi.NRTFailure {
		t.Fatalf("get_nccl_comm's own failure: status %d, want NRT_FAILURE", Status(errs[1]))
	}
}

// contextID is the node's context_id, 0 in a release whose node lacks the
// field (docs/generator.md#absent-fields).
func contextID(m *abi.EncNcclCommNode) uint32 {
	id, _ := m.GetContextID()
	return id
}
