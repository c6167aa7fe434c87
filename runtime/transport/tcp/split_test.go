package tcp

import (
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/collectives"
)

// TestSplitIDRefusals: a split id survives its round trip, and every field
// no maker writes is refused by name (docs/bootstrap.md#group-comm-split).
// Cost: microseconds.
func TestSplitIDRefusals(t *testing.T) {
	good := SplitID{WorldSize: 8, Cluster: 0xfeedface, Epoch: 1700000000, RankN: 8, Root: 3, Serial: 2}
	id := EncodeSplitID(good)
	if got, err := DecodeSplitID(&id); err != nil || got != good {
		t.Fatalf("round trip: %+v %v, want %+v", got, err, good)
	}
	if root := NewUniqueID(netipLoop(4242)); IsSplitID(&root) {
		t.Fatal("a root id reads as a split id")
	}
	root := NewUniqueID(netipLoop(4242))
	if _, err := DecodeSplitID(&root); !errors.Is(err, ErrNotSplit) {
		t.Errorf("a root id: %v, want ErrNotSplit", err)
	}
	if _, err := RootAddr(&id); err == nil || !strings.Contains(err.Error(), "split of the world") {
		t.Errorf("a flat-path rank given a split id: %v, want it refused by name", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*UniqueID)
		want string
	}{
		{"version", func(id *UniqueID) { id[8] = 2 }, "version 2"},
		{"tail", func(id *UniqueID) { id[100] = 1 }, "byte 100"},
		{"world-size-0", func(id *UniqueID) { *id = EncodeSplitID(SplitID{RankN: 0, Serial: 1}) }, "world size 0"},
		{"world-size-huge", func(id *UniqueID) {
			*id = EncodeSplitID(SplitID{WorldSize: uint32(abi.BootstrapMaxRanks) + 1, RankN: uint32(abi.BootstrapMaxRanks) + 1, Serial: 1})
		}, "BOOTSTRAP_MAX_RANKS"},
		{"rank-n", func(id *UniqueID) { id[32] = 7 }, "rank_n 7"},
		{"root", func(id *UniqueID) { id[36] = 8 }, "rank 8, is not a rank"},
		{"serial", func(id *UniqueID) { id[40] = 0 }, "serial 0"},
	} {
		bad := id
		tc.edit(&bad)
		if _, err := DecodeSplitID(&bad); err == nil || errors.Is(err, ErrNotSplit) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if _, err := DescribeUniqueID(&bad); err == nil {
			t.Errorf("%s: DescribeUniqueID passed it", tc.name)
		}
	}
}

// FuzzSplitID: any 128 bytes decode without a panic, and an id that
// decodes is exactly what its fields encode to (no byte is ignored).
func FuzzSplitID(f *testing.F) {
	id := EncodeSplitID(SplitID{WorldSize: 4, Cluster: 1, Epoch: 2, RankN: 4, Root: 0, Serial: 1})
	f.Add(id[:])
	root := NewUniqueID(netipLoop(1))
	f.Add(root[:])
	f.Add([]byte("nrtsplit"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var id UniqueID
		copy(id[:], b)
		s, err := DecodeSplitID(&id)
		if err != nil {
			return
		}
		if back := EncodeSplitID(s); back != id {
			t.Fatalf("%x decodes to %+v, which encodes to %x", id, s, back)
		}
	})
}

// splitRank is one rank of a split test: its own runtime and comms over
// its world endpoint ep, the global comm, then the replica group of the
// whole world; mode is its EnvGroupInit. It returns the group comm.
func splitRank(t *testing.T, ep *Endpoint, r, n int, mode collectives.GroupInit, timeout time.Duration) (*Comms, *Comm, error) {
	comms := NewComms(t.Context(), NewNet(Config{Timeout: timeout, IfName: "lo", Logger: quietLog}))
	t.Cleanup(comms.Close)
	rt, err := collectives.New(oneCore{}, comms, collectives.Options{Logger: quietLog, GroupInit: mode})
	if err != nil {
		return comms, nil, err
	}
	t.Cleanup(rt.Close)
	if err := rt.InitGlobalComm(0, uint32(r), uint32(n), 0, ep.Root().String(), true); err != nil {
		return comms, nil, err
	}
	if err := rt.SetupGlobalComm(0, 0, ep); err != nil {
		return comms, nil, err
	}
	parts := make([]uint32, n)
	for i := range parts {
		parts[i] = uint32(i)
	}
	c := &collectives.Context{CCOpOwner: true, Ops: program(false),
		ReplicaGroups: []collectives.ReplicaGroup{{Rank: abi.EncRgSendrecvRank, RankN: n, GroupID: 1, SrcTargetPairsID: -1,
			Participants: parts, BootstrapParticipants: parts, BootstrapRank: r}}}
	if err := rt.CalculateSignature(0, 0, c); err != nil {
		return comms, nil, err
	}
	node, err := rt.GetNcclComm(&c.ReplicaGroups[0], 0, 0, 1, false)
	if err != nil {
		return comms, nil, err
	}
	return comms, comms.Comm(node.Comm()), nil
}

// TestGroupCommSplit: by default the global group and the world group of a
// world of 4 take split ids (serials 1 and 2 of rank 0), start no root and
// open no connection of their own: each comm is this rank's world endpoint.
// Then the planted disagreements, each refused by name: one rank on the
// seed's flat path given a split id; the maker on the flat path (a root id
// given to the split ranks); a forged id. Cost: three worlds of 4 on
// loopback, about 1.5 s (the maker-on-flat case waits out a 1 s timeout).
// A refusing rank closes its world, as its process's exit would, so the
// others fail at once instead of at the world's timeout.
func TestGroupCommSplit(t *testing.T) {
	const n = 4
	run := func(modes func(r int) collectives.GroupInit, timeout time.Duration) ([]*Endpoint, []*Comms, []*Comm, []error) {
		eps, errs, _ := world(t, n, true, 5*time.Second, nil)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		cs, cms, got := make([]*Comms, n), make([]*Comm, n), make([]error, n)
		var wg sync.WaitGroup
		for r := 0; r < n; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs[r], cms[r], got[r] = splitRank(t, eps[r], r, n, modes(r), timeout)
				if got[r] != nil {
					eps[r].Close() // as the rank's exit would: the others fail at once
				}
			}()
		}
		wg.Wait()
		return eps, cs, cms, got
	}
	eps, cs, cms, errs := run(func(int) collectives.GroupInit { return collectives.GroupInitSplit }, 5*time.Second)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		s, err := DecodeSplitID(&cms[r].ID)
		if err != nil || s.Serial != 2 || s.Root != 0 || s.Cluster != eps[r].ClusterID() || s.Epoch != eps[r].Epoch() {
			t.Errorf("rank %d: the group's id %v %v, want rank 0's second split of this world", r, s, err)
		}
		if cms[r].Endpoint != eps[r] || cms[r].Rank != r || cms[r].RankN != n {
			t.Errorf("rank %d: the group comm is not a view of this rank's world", r)
		}
		if len(cs[r].roots) != 0 {
			t.Errorf("rank %d: %d roots started, want none", r, len(cs[r].roots))
		}
	}
	// The forged ids, given straight to a rank's split init.
	for _, tc := range []struct {
		name string
		s    SplitID
		want string
	}{
		{"cluster", SplitID{WorldSize: n, Cluster: eps[1].ClusterID() ^ 1, Epoch: eps[1].Epoch(), RankN: n, Serial: 9}, "cluster id is not this world's"},
		{"epoch", SplitID{WorldSize: n, Cluster: eps[1].ClusterID(), Epoch: eps[1].Epoch() - 1, RankN: n, Serial: 9}, "epoch is not this world's"},
	} {
		id := EncodeSplitID(tc.s)
		if _, err := cs[1].InitCommSplit(eps[1], n, &id, 1, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("forged %s: %v, want %q", tc.name, err, tc.want)
		}
	}
	good := cms[1].ID
	if _, err := cs[1].InitCommSplit(eps[1], n, &good, 2, false); err == nil || !strings.Contains(err.Error(), "lists the world in order") {
		t.Errorf("rank 1 asked to be group rank 2: %v", err)
	}
	// The world survives its split comms: freeing them closes nothing.
	for r := range cs {
		cs[r].Close()
		if err := eps[r].Send((r+1)%n, []byte{1}); err != nil {
			t.Fatalf("rank %d: the world is closed after its split comms: %v", r, err)
		}
	}
	for r := range eps {
		var b [1]byte
		if err := eps[r].Recv((r+n-1)%n, b[:]); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}

	_, _, _, errs = run(func(r int) collectives.GroupInit {
		if r == 2 {
			return collectives.GroupInitFlat
		}
		return collectives.GroupInitSplit
	}, 5*time.Second)
	if err := errs[2]; err == nil || !strings.Contains(err.Error(), "split of the world") || !strings.Contains(err.Error(), collectives.EnvGroupInit) {
		t.Errorf("rank 2 on the flat path: %v, want the split id refused by name", err)
	}

	_, _, _, errs = run(func(r int) collectives.GroupInit {
		if r == 0 {
			return collectives.GroupInitFlat
		}
		return collectives.GroupInitSplit
	}, time.Second)
	for r := 1; r < n; r++ {
		if err := errs[r]; err == nil || !strings.Contains(err.Error(), "names a root at") || !strings.Contains(err.Error(), collectives.EnvGroupInit) {
			t.Errorf("rank %d given the flat maker's root id: %v, want it refused by name", r, err)
		}
	}
	if errs[0] == nil {
		t.Error("rank 0, the maker on the flat path, agreed with nobody")
	}
}

func netipLoop(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)
}
