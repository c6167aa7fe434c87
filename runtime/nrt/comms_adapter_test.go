package nrt

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/transport/nccl"
)

// counting is the trampoline Bootstrap with a tally of what crossed it, by
// message size, so a test sees the per-NC bootstrap's messages go through
// ncclBootstrapSend/Recv.
type counting struct {
	Bootstrap
	sends, recvs sync.Map // size -> *atomic.Int64
}

func tally(m *sync.Map, size int) {
	v, _ := m.LoadOrStore(size, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func count(m *sync.Map, size int) int64 {
	if v, ok := m.Load(size); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

func (c *counting) BootstrapSend(state unsafe.Pointer, peer int, data []byte, hint string) error {
	tally(&c.sends, len(data))
	return c.Bootstrap.BootstrapSend(state, peer, data, hint)
}

func (c *counting) BootstrapRecv(state unsafe.Pointer, peer int, data []byte, hint string) error {
	tally(&c.recvs, len(data))
	return c.Bootstrap.BootstrapRecv(state, peer, data, hint)
}

// initCounting counts the comms each rank's Comms initialised.
type initCounting struct {
	*Comms
	inits atomic.Int64
}

func (c *initCounting) InitComm(rankN int, id *[UniqueIDBytes]byte, rank int, bypassGraph bool) (uintptr, error) {
	h, err := c.Comms.InitComm(rankN, id, rank, bypassGraph)
	if err == nil {
		c.inits.Add(1)
	}
	return h, err
}

// rank is one rank of a trampoline world: its own collectives runtime (as a
// process of its own would have) and its own libnccom comm.
type rank struct {
	rt    *collectives.Runtime
	comms *initCounting
	dev   int
}

// TestCollectivesOverTheTrampolines runs the per-NC bootstrap of
// runtime/collectives for worlds of 8 and 13 ranks, every message crossing
// the real ncclBootstrapSend/Recv trampolines into the libnccom double (a
// .so generated from the spec), whose in-process bootstrap carries it to the
// peer rank's comm. Each rank is a goroutine with its own runtime and its own
// comm from ncclInitGlobalComm. The global group and a shuffled replica group
// agree; a group in which one rank's signature differs fails on every rank
// with the exact message and initialises no comm. Every message of the three
// bootstraps is counted crossing ncclBootstrapSend and ncclBootstrapRecv.
func TestCollectivesOverTheTrampolines(t *testing.T) {
	initGood(t)
	topo, err := device.Default(DeviceABI())
	if err != nil {
		t.Fatal(err)
	}
	core, err := topo.CoreIdentity(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{8, 13} {
		t.Run(fmt.Sprint("N=", n), func(t *testing.T) {
			boot := &counting{}
			ranks := make([]rank, n)
			for r := range ranks {
				c := &initCounting{Comms: &Comms{}}
				rt, err := collectives.New(topo, c, collectives.Options{Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(rt.Close)
				ranks[r] = rank{rt: rt, comms: c, dev: core.NecDev}
			}
			root := fmt.Sprintf("trampoline-world-%d", n)
			noErr(t, "global comm", everyRank(n, func(r int) error {
				if err := ranks[r].rt.InitGlobalComm(0, uint32(r), uint32(n), 0, root, true); err != nil {
					return err
				}
				var dev DeviceInfo
				state, err := InitGlobalComm(r, n, &dev, root, "nrt test")
				if err != nil {
					return err
				}
				tr, err := nccl.New(boot, unsafe.Pointer(state), r, n, "get_nccl_comm")
				if err != nil {
					return err
				}
				return ranks[r].rt.SetupGlobalComm(ranks[r].dev, 0, tr)
			}))
			globalCluster := clusters(t, ranks, func(r int) uintptr { return ranks[r].rt.GlobalComm(ranks[r].dev, 0).Node().Comm() })
			bootMessages(t, boot, n, 1)

			// a replica group in a shuffled bootstrap order: it agrees, over
			// a comm of its own
			perm := make([]uint32, n)
			for i := range perm {
				perm[i] = uint32(i)
			}
			rand.New(rand.NewPCG(uint64(n), 3)).Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			nodes := make([]*collectives.CommNode, n)
			noErr(t, "replica group", everyRank(n, func(r int) error {
				var err error
				nodes[r], err = ranks[r].rt.GetNcclComm(group(perm, r, 0), ranks[r].dev, 0, 1, false)
				return err
			}))
			groupCluster := clusters(t, ranks, func(r int) uintptr { return nodes[r].Comm() })
			if groupCluster == globalCluster {
				t.Fatalf("the replica group's comm reports the global comm's cluster id %d", globalCluster)
			}
			bootMessages(t, boot, n, 2)

			// one rank disagrees, in a group of the whole world in another
			// order: every rank fails, none initialises a comm
			var inits int64
			for _, rk := range ranks {
				inits += rk.comms.inits.Load()
			}
			rev := make([]uint32, n)
			for i, p := range perm {
				rev[n-1-i] = p
			}
			bad := perm[n/2]
			errs := everyRank(n, func(r int) error {
				rg := group(rev, r, 1)
				if uint32(r) == bad {
					rg.Signature[3] ^= 0x10
				}
				_, err := ranks[r].rt.GetNcclComm(rg, ranks[r].dev, 0, 2, false)
				return err
			})
			for r, err := range errs {
				var ce *collectives.Error
				if want := cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(r)); !errors.As(err, &ce) || ce.Msg != want {
					t.Fatalf("rank %d: %v, want %q", r, err, want)
				}
			}
			var after int64
			for _, rk := range ranks {
				after += rk.comms.inits.Load()
			}
			if after != inits {
				t.Fatalf("%d comms initialised in a world that disagreed", after-inits)
			}
			bootMessages(t, boot, n, 3)
		})
	}
}

// group is bootstrap order perm as rank gid sees it.
func group(perm []uint32, gid int, groupID int) *collectives.ReplicaGroup {
	for i, p := range perm {
		if int(p) == gid {
			return &collectives.ReplicaGroup{Rank: abi.EncRgSendrecvRank, RankN: len(perm), GroupID: groupID, SrcTargetPairsID: -1,
				Participants: perm, BootstrapParticipants: perm, BootstrapRank: i}
		}
	}
	panic(fmt.Sprintf("global device %d is not in %v", gid, perm))
}

// clusters asks libnccom, through ncclGetCommInfo, for the cluster id of
// each rank's comm: the ranks hold distinct comms of one world.
func clusters(t *testing.T, ranks []rank, comm func(r int) uintptr) uint64 {
	t.Helper()
	seen := map[uintptr]int{}
	var id uint64
	for r := range ranks {
		h := comm(r)
		if h == 0 {
			t.Fatalf("rank %d has no comm", r)
		}
		if q, dup := seen[h]; dup {
			t.Fatalf("ranks %d and %d share comm %#x", q, r, h)
		}
		seen[h] = r
		rec, err := ranks[r].comms.lookup(h) // the Comm behind the handle the node keeps
		if err != nil {
			t.Fatal(err)
		}
		info, err := GetCommInfo(rec.comm)
		if err != nil {
			t.Fatal(err)
		}
		if r == 0 {
			id = info.ClusterID
		} else if info.ClusterID != id {
			t.Fatalf("rank %d's comm is in cluster %d, rank 0's in %d", r, info.ClusterID, id)
		}
	}
	return id
}

// bootMessages checks the trampolines carried exactly the messages of the
// groups bootstrapped so far: n-1 signatures (17 B) and n-1 unique ids
// (129 B) for each.
func bootMessages(t *testing.T, b *counting, n, groups int) {
	t.Helper()
	want := int64(groups * (n - 1))
	for _, size := range []int{int(abi.EncSigMsgSize), int(abi.EncUIDMsgSize)} {
		if s, r := count(&b.sends, size), count(&b.recvs, size); s != want || r != want {
			t.Fatalf("after %d groups: %d sends and %d receives of %d bytes crossed the trampolines, want %d each", groups, s, r, size, want)
		}
	}
}

func everyRank(n int, f func(r int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(r)
		}()
	}
	wg.Wait()
	return errs
}

func noErr(t *testing.T, what string, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%s: rank %d: %v", what, r, err)
		}
	}
}
