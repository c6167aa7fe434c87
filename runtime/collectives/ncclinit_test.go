package collectives

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// cObjects are one rank's enc_context and enc_comm in C memory, as the op
// compiler would hold them: every stream uninitialised but comm 5's (stream 2),
// and comm's {id, stream_id} preset to a sentinel pair.
type cObjects struct {
	ec   *abi.EncContext
	comm *abi.EncComm
}

const sentinelID, sentinelStream = -7, 9

func newCObjects(t testing.TB) cObjects {
	t.Helper()
	o := cObjects{ec: (*abi.EncContext)(calloc(unsafe.Sizeof(abi.EncContext{}))), comm: (*abi.EncComm)(calloc(unsafe.Sizeof(abi.EncComm{})))}
	if o.ec == nil || o.comm == nil {
		t.Fatal("calloc failed")
	}
	t.Cleanup(func() { cfree(unsafe.Pointer(o.ec)); cfree(unsafe.Pointer(o.comm)) })
	for i := range o.ec.StreamIDMap {
		o.ec.StreamIDMap[i] = abi.EncStreamIDUninitialized
	}
	o.ec.StreamIDMap[5] = 2
	o.comm.SetID(sentinelID)
	o.comm.SetStreamID(sentinelStream)
	return o
}

// bindingProblems checks, for every rank, that comm->{id, stream_id} is the
// pair want when the group has ops and the untouched sentinel otherwise, read
// as raw bytes at +80 and +84 of the C object.
func bindingProblems(objs []cObjects, withOps bool, id int32, stream uint32) []string {
	var bad []string
	for r, o := range objs {
		raw := unsafe.Slice((*byte)(unsafe.Pointer(o.comm)), 88)
		gotID := int32(uint32(raw[80]) | uint32(raw[81])<<8 | uint32(raw[82])<<16 | uint32(raw[83])<<24)
		gotStream := uint32(raw[84]) | uint32(raw[85])<<8 | uint32(raw[86])<<16 | uint32(raw[87])<<24
		wantID, wantStream := int32(sentinelID), uint32(sentinelStream)
		if withOps {
			wantID, wantStream = id, stream
		}
		if gotID != wantID || gotStream != wantStream {
			bad = append(bad, fmt.Sprintf("rank %d: comm {id, stream_id} at +80/+84 = {%d, %d}, want {%d, %d}", r, gotID, gotStream, wantID, wantStream))
		}
	}
	return bad
}

// initAll runs NcclInitComm of comm 5 on every rank of wd at once.
func (wd *world) initAll(objs []cObjects, rgs []*ReplicaGroup) ([]*CommNode, []error) {
	nodes := make([]*CommNode, wd.n)
	errs := each(wd.n, func(r int) error {
		n, err := wd.rt.NcclInitComm(objs[r].ec, objs[r].comm, 5, rgs[r], r, 0, false)
		nodes[r] = n
		return err
	})
	return nodes, errs
}

func TestNcclInitCommBindsOnlyGroupsWithOps(t *testing.T) {
	const n = 8
	for _, plantedFault := range []bool{false, true} {
		wd := newWorld(t, n, inproc.Options{})
		wd.rt.hooks.bindWithoutOps = plantedFault
		for _, ops := range []uint32{3, 0} {
			objs := make([]cObjects, n)
			for r := range objs {
				objs[r] = newCObjects(t)
			}
			perm := shuffled(n, uint64(ops)+11)
			rgs := groups(perm, 4)
			for _, rg := range rgs {
				rg.NumOps = ops
			}
			nodes, errs := wd.initAll(objs, rgs)
			noErrors(t, "nccl_init_comm", errs)
			for r, node := range nodes {
				if node.Mirror().GetStreamID() != 2 || wd.rt.Pooled(r, 0, 2, perm) != node {
					t.Fatalf("ops=%d rank %d: node not pooled on stream_id_map[5] = 2 (node stream %d)", ops, r, node.Mirror().GetStreamID())
				}
			}
			bad := bindingProblems(objs, ops > 0, 5, 2)
			switch {
			case !plantedFault && len(bad) > 0:
				t.Fatalf("ops=%d: %s", ops, strings.Join(bad, "; "))
			case plantedFault && ops == 0 && len(bad) != n:
				t.Fatalf("the planted bind-without-ops fault went unseen on %d of %d ranks", n-len(bad), n)
			}
		}
	}
}

func TestNcclInitCommRefusesUninitialisedStreams(t *testing.T) {
	wd := newWorld(t, 2, inproc.Options{})
	o := newCObjects(t)
	rg := groups(identity(2), 1)[0]
	rg.NumOps = 1
	before := wd.rt.Stats().CommNodes
	for _, c := range []struct {
		ec     *abi.EncContext
		comm   *abi.EncComm
		commID int
		want   string
	}{
		{o.ec, o.comm, 3, "stream_id_map[3] is ENC_STREAM_ID_UNINITIALIZED"},
		{o.ec, o.comm, 12, "comm_id 12 is outside enc_context.stream_id_map"},
		{o.ec, o.comm, -1, "comm_id -1 is outside"},
		{nil, o.comm, 5, "both must be given"},
		{o.ec, nil, 5, "both must be given"},
	} {
		_, err := wd.rt.NcclInitComm(c.ec, c.comm, c.commID, rg, 0, 0, false)
		if err == nil || !strings.Contains(err.Error(), c.want) || Status(err) != abi.NRTInvalid {
			t.Errorf("comm %d: %v, want NRT_INVALID %q", c.commID, err, c.want)
		}
	}
	o.ec.StreamIDMap[5] = uint32(abi.EncMaxStreamN)
	if _, err := wd.rt.NcclInitComm(o.ec, o.comm, 5, rg, 0, 0, false); err == nil || !strings.Contains(err.Error(), "ENC_MAX_STREAM_N") {
		t.Errorf("stream %d: %v", abi.EncMaxStreamN, err)
	}
	if got := bindingProblems([]cObjects{o}, false, 0, 0); len(got) > 0 || wd.rt.Stats().CommNodes != before {
		t.Errorf("a refused call changed state: %v, nodes %d -> %d", got, before, wd.rt.Stats().CommNodes)
	}
}

// A reader of comm->{id, stream_id} never sees half a binding. The observer
// spins on the pair while the ranks bind; the planted fault writes the two
// halves separately and lets the observer look in between, which it reports.
func TestNcclInitCommBindingIsOneStore(t *testing.T) {
	const n = 4
	for _, planted := range []bool{false, true} {
		wd := newWorld(t, n, inproc.Options{})
		objs := make([]cObjects, n)
		for r := range objs {
			objs[r] = newCObjects(t)
		}
		var torn atomic.Int64
		observe := func() {
			for _, o := range objs {
				id, st := CommBinding(o.comm)
				old, bound := id == sentinelID && st == sentinelStream, id == 5 && st == 2
				if !old && !bound {
					torn.Add(1)
				}
			}
		}
		if planted {
			wd.rt.hooks.splitBinding = observe
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				observe()
			}
		}()
		rgs := groups(identity(n), 2)
		for _, rg := range rgs {
			rg.NumOps = 1
		}
		_, errs := wd.initAll(objs, rgs)
		stop.Store(true)
		wg.Wait()
		noErrors(t, "nccl_init_comm", errs)
		if got := torn.Load(); planted != (got > 0) {
			t.Fatalf("planted split store %v: the observer saw %d torn {id, stream_id} pairs", planted, got)
		}
	}
}
