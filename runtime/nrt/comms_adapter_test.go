package nrt

import (
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/transport/nccl"
)

// recording wraps the trampoline Comms and keeps the unique ids libnccom
// handed out, to show where they came from.
type recording struct {
	*Comms
	mu  sync.Mutex
	ids []string
}

func (r *recording) GetUniqueID(id *[UniqueIDBytes]byte, rankN int, hint string) error {
	err := r.Comms.GetUniqueID(id, rankN, hint)
	r.mu.Lock()
	r.ids = append(r.ids, cut(id[:]))
	r.mu.Unlock()
	return err
}

// TestCollectivesOverTheTrampolines runs the collectives runtime of issue 5
// on the libnccom trampolines: the global comm and one replica group of a
// one-rank world bootstrap through ncclGetUniqueId, ncclBootstrap* (the
// transport adapter over this package's Bootstrap) and ncclInitComm into the
// loaded double. The unique id the group agreed on is the one the double
// wrote, so the calls went through the trampolines.
func TestCollectivesOverTheTrampolines(t *testing.T) {
	initGood(t)
	topo, err := device.Default(DeviceABI())
	if err != nil {
		t.Fatal(err)
	}
	comms := &recording{Comms: &Comms{}}
	rt, err := collectives.New(topo, comms, collectives.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	id, err := topo.CoreIdentity(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.InitGlobalComm(0, 0, 1, 0, "", true); err != nil {
		t.Fatal(err)
	}
	var dev DeviceInfo
	state, err := InitGlobalComm(0, 1, &dev, "", "nrt test")
	if err != nil || state == nil {
		t.Fatalf("ncclInitGlobalComm: %v (state %v)", err, state)
	}
	tr, err := nccl.New(Bootstrap{}, unsafe.Pointer(state), 0, 1, "get_nccl_comm")
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.SetupGlobalComm(id.NecDev, 0, tr); err != nil {
		t.Fatalf("SetupGlobalComm over the trampolines: %v", err)
	}
	rg := &collectives.ReplicaGroup{Rank: 0, RankN: 1, GroupID: 1, SrcTargetPairsID: -1,
		Participants: []uint32{0}, BootstrapParticipants: []uint32{0}}
	if _, err := rt.GetNcclComm(rg, id.NecDev, 0, 1, false); err != nil {
		t.Fatalf("GetNcclComm over the trampolines: %v", err)
	}
	if len(comms.ids) == 0 {
		t.Fatal("no unique id was asked of libnccom")
	}
	for _, got := range comms.ids {
		if !strings.HasPrefix(got, "nccom-stub uid rank_n=1") {
			t.Errorf("unique id %q did not come from the libnccom double", got)
		}
	}
	if _, _, err := comms.CommInfo(0xdead); err == nil {
		t.Error("CommInfo of a handle these Comms never made succeeded")
	}
}
