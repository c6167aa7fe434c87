package tcp

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
)

type oneCore struct{}

func (oneCore) CoreIdentity(uint32) (device.Identity, error) { return device.Identity{}, nil }
func (oneCore) VirtualServerSize() uint32                    { return 0 }

func program(reordered bool) []collectives.Op {
	ops := []collectives.Op{
		{Kind: abi.EncAllReduce, SizeN: 1 << 20, AlgWord: 1, GroupID: 1},
		{Kind: abi.EncAllGather, SizeN: 2 << 20, AlgWord: 2, GroupID: 1},
	}
	if reordered {
		ops[0], ops[1] = ops[1], ops[0]
	}
	return ops
}

// TestCollectivesOverTCP runs the per-NC bootstrap
// (docs/bootstrap.md#the-per-nc-bootstrap) unchanged
// over TCP: each rank has its own runtime and bootstrap network, as
// separate processes would; the global comm's transport is a flat-
// bootstrapped world and every comm is another one, joined through a unique
// id naming a root.
func TestCollectivesOverTCP(t *testing.T) {
	const n = 4
	for _, reordered := range []int{-1, 2} {
		eps, errs, _ := world(t, n, true, 5*time.Second, nil)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		parts := []uint32{0, 1, 2, 3}
		ids := make([]UniqueID, n)
		got := make([]error, n)
		var wg sync.WaitGroup
		for r := 0; r < n; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				comms := NewComms(t.Context(), NewNet(Config{Timeout: 5 * time.Second, IfName: "lo", Logger: quietLog}))
				defer comms.Close()
				rt, err := collectives.New(oneCore{}, comms, collectives.Options{Logger: quietLog})
				if err != nil {
					got[r] = err
					return
				}
				defer rt.Close()
				if got[r] = rt.InitGlobalComm(0, uint32(r), n, 0, eps[0].Root().String(), true); got[r] != nil {
					return
				}
				if got[r] = rt.SetupGlobalComm(0, 0, eps[r]); got[r] != nil {
					return
				}
				c := &collectives.Context{
					CCOpOwner: true,
					ReplicaGroups: []collectives.ReplicaGroup{{Rank: abi.EncRgSendrecvRank, RankN: n, GroupID: 1, SrcTargetPairsID: -1,
						Participants: parts, BootstrapParticipants: parts, BootstrapRank: r}},
					Ops: program(r == reordered),
				}
				if got[r] = rt.CalculateSignature(0, 0, c); got[r] != nil {
					return
				}
				node, err := rt.GetNcclComm(&c.ReplicaGroups[0], 0, 0, 1, false)
				if got[r] = err; err != nil {
					return
				}
				cm := comms.Comm(node.Comm())
				ids[r] = cm.ID
				if rank, size, err := comms.CommInfo(node.Comm()); err != nil || rank != r || size != n || cm.Endpoint.Size() != n {
					t.Errorf("rank %d: comm info %d/%d %v", r, rank, size, err)
				}
			}()
		}
		wg.Wait()
		for r, err := range got {
			if reordered < 0 {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				} else if ids[r] != ids[0] {
					t.Errorf("rank %d joined %x, rank 0 %x", r, ids[r][:8], ids[0][:8])
				}
				continue
			}
			var ce *collectives.Error
			if want := cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(r)); !errors.As(err, &ce) || ce.Msg != want {
				t.Errorf("rank %d with rank %d reordered: %v, want %q", r, reordered, err, want)
			}
		}
		if reordered < 0 {
			// the world group takes a split id by default (splitcomm.go)
			if s, err := DecodeSplitID(&ids[0]); err != nil || int(s.WorldSize) != n {
				t.Errorf("the agreed id is no split of the world of %d: %v %v", n, s, err)
			}
		}
	}
}
