package tcp

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/collectives"
)

// TestGroupCommInitHier: on a hierarchical world of 8 ranks (instances of
// 4), a runtime asked for the 2-tier group init (collectives.Options.
// GroupHierarchy, docs/bootstrap.md#the-per-nc-bootstrap) bootstraps the
// global group's comm and a replica group's comm over the hierarchical path
// with the world's instances; a group that lies in one instance stays flat.
// Without the option every comm is flat (the seed's dispatch): the control.
// Cost: three 8-rank loopback worlds, well under a second.
func TestGroupCommInitHier(t *testing.T) {
	const n, l = 8, 4
	for _, tc := range []struct {
		name  string
		hier  bool
		parts []uint32
		wantL int // the group comm's L; 0: flat
	}{
		{"seed-flat", false, []uint32{0, 1, 2, 3, 4, 5, 6, 7}, 0},
		{"world-group", true, []uint32{0, 1, 2, 3, 4, 5, 6, 7}, 4},
		{"one-instance", true, []uint32{4, 5, 6, 7}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps, errs, _ := hierWorld(t, false, n, l, same(l), nil)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			got := make([]error, n)
			globalL := make([]int, n)
			groupL := make([]int, n)
			var wg sync.WaitGroup
			for r := 0; r < n; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					globalL[r], groupL[r], got[r] = groupRank(t, eps[r], r, n, tc.hier, tc.parts)
				}()
			}
			wg.Wait()
			wantGlobal := 0
			if tc.hier {
				wantGlobal = l
			}
			for r, err := range got {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
				if globalL[r] != wantGlobal {
					t.Errorf("rank %d: the global group's comm has L %d, want %d", r, globalL[r], wantGlobal)
				}
				if in := memberOf(tc.parts, r); in && groupL[r] != tc.wantL {
					t.Errorf("rank %d: the replica group's comm has L %d, want %d", r, groupL[r], tc.wantL)
				}
			}
		})
	}
}

// groupRank is one rank of TestGroupCommInitHier: its own runtime and
// network, the global comm over its world endpoint, then the replica group
// of parts when it is a member; it returns each comm's L (0: flat).
func groupRank(t *testing.T, ep *Endpoint, r, n int, hier bool, parts []uint32) (int, int, error) {
	comms := NewComms(t.Context(), NewNet(Config{Timeout: 5 * time.Second, IfName: "lo", Logger: quietLog}))
	defer comms.Close()
	opts := collectives.Options{Logger: quietLog, GroupHierarchy: hier}
	if !hier {
		opts.GroupInit = collectives.GroupInitFlat // the seed's, not the default split
	}
	rt, err := collectives.New(oneCore{}, comms, opts)
	if err != nil {
		return 0, 0, err
	}
	defer rt.Close()
	if err := rt.InitGlobalComm(0, uint32(r), uint32(n), 0, ep.Root().String(), true); err != nil {
		return 0, 0, err
	}
	if err := rt.SetupGlobalComm(0, 0, ep); err != nil {
		return 0, 0, err
	}
	commL := func(h uintptr) int {
		_, l := comms.Comm(h).Endpoint.Hier()
		return l
	}
	world := make([]uint32, n)
	for i := range world {
		world[i] = uint32(i)
	}
	gl := commL(rt.Pooled(0, 0, 0, world).Comm())
	if !memberOf(parts, r) {
		return gl, 0, nil
	}
	rank := 0
	for i, p := range parts {
		if int(p) == r {
			rank = i
		}
	}
	c := &collectives.Context{CCOpOwner: true, Ops: program(false),
		ReplicaGroups: []collectives.ReplicaGroup{{Rank: abi.EncRgSendrecvRank, RankN: len(parts), GroupID: 1, SrcTargetPairsID: -1,
			Participants: parts, BootstrapParticipants: parts, BootstrapRank: rank}}}
	if err := rt.CalculateSignature(0, 0, c); err != nil {
		return gl, 0, err
	}
	node, err := rt.GetNcclComm(&c.ReplicaGroups[0], 0, 0, 1, false)
	if err != nil {
		return gl, 0, err
	}
	return gl, commL(node.Comm()), nil
}

func memberOf(parts []uint32, r int) bool {
	for _, p := range parts {
		if int(p) == r {
			return true
		}
	}
	return false
}

// TestGroupCommInitHierRefusals: Comms' hierarchical calls refuse a shape
// that is not hierarchical (the collectives side refuses a comm layer or a
// transport without the hierarchy: TestGroupInitRefusals there).
func TestGroupCommInitHierRefusals(t *testing.T) {
	comms := NewComms(t.Context(), testNet(t, time.Second))
	defer comms.Close()
	var id UniqueID
	if err := comms.GetUniqueIDHier(&id, 4, 4, "t"); err == nil || !strings.Contains(err.Error(), "not hierarchical") {
		t.Errorf("GetUniqueIDHier of 4 ranks with 4 per instance: %v", err)
	}
	if _, err := comms.InitCommHier(4, &id, 0, 0, false); err == nil || !strings.Contains(err.Error(), "not hierarchical") {
		t.Errorf("InitCommHier with 0 per instance: %v", err)
	}
}
