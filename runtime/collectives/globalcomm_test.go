package collectives

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

func TestInitFillsTheMirror(t *testing.T) {
	ids := &testIDs{vss: 4}
	rt := newRuntime(t, ids, &inproc.Comms{})
	if err := rt.InitGlobalComm(9, 6, 8, 1, "10.0.0.1:5000", true); err != nil {
		t.Fatal(err)
	}
	g := rt.GlobalComm(9, 1)
	if g == nil || rt.GlobalComm(9, 0) != nil {
		t.Fatal("the comm is not registered under (nec_dev 9, ctx 1) alone")
	}
	m := g.Mirror()
	want := abi.EncGlbComm{GDeviceID: 6, GDeviceCnt: 8, VtpbIdx: 16, NECDevID: 9, MLAIdx: 4, HostDeviceID: 109, RoutingID: 9 ^ 5,
		VirtualServerID: 1, ReservationID: 0xabc009, CheckSigs: true, IncRecvSemValuesBufferSize: abi.SemIncBufferSize}
	got := abi.EncGlbComm{GDeviceID: m.GetGDeviceID(), GDeviceCnt: m.GetGDeviceCnt(), VtpbIdx: m.GetVtpbIdx(), NECDevID: m.GetNECDevID(), MLAIdx: m.GetMLAIdx(),
		HostDeviceID: m.GetHostDeviceID(), RoutingID: m.GetRoutingID(), VirtualServerID: m.GetVirtualServerID(), ReservationID: m.GetReservationID(),
		CheckSigs: m.CheckSigs, IncRecvSemValuesBufferSize: m.GetIncRecvSemValuesBufferSize()}
	if got != want {
		t.Fatalf("mirror identity\n got %+v\nwant %+v", got, want)
	}
	if m.RootCommID == 0 || m.DeviceBarrierTable == 0 || m.IncRecvSemValuesBuffer == 0 {
		t.Fatalf("root_comm_id %#x, device_barrier_table %#x, sem buffer %#x: all must be set", m.RootCommID, m.DeviceBarrierTable, m.IncRecvSemValuesBuffer)
	}
	if got := g.RootCommID(); got != "10.0.0.1:5000" {
		t.Fatalf("root_comm_id reads %q", got)
	}
	if uintptr(unsafe.Pointer(g.SemValues())) != m.IncRecvSemValuesBuffer {
		t.Fatal("the mirror does not point at the semaphore buffer")
	}
	if unsafe.Sizeof(*m) != abi.SizeofEncGlbComm {
		t.Fatalf("mirror is %d bytes", unsafe.Sizeof(*m))
	}
}

// The semaphore-increment buffer is what the spec records: header, then the
// INFERRED reading of the seed's SSE loop (word k = k), and the spec really
// records that reading as INFERRED with its contradiction.
func TestSemaphoreBuffer(t *testing.T) {
	rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
	if err := rt.InitGlobalComm(0, 0, 1, 0, "", false); err != nil {
		t.Fatal(err)
	}
	g := rt.GlobalComm(0, 0)
	if len(g.sem) != int(abi.SemIncBufferSize) || abi.SemIncBufferSize != abi.SizeofEncSemIncValues {
		t.Fatalf("buffer is %d bytes, spec %d / %d", len(g.sem), abi.SemIncBufferSize, abi.SizeofEncSemIncValues)
	}
	v := g.SemValues()
	if v.GetHeader() != abi.SemIncHeader {
		t.Fatalf("header %#x", v.GetHeader())
	}
	for k, x := range v.Values {
		if x != abi.SemIncFirstValue+uint32(k) {
			t.Fatalf("word %d = %d, want %d", k+1, x, abi.SemIncFirstValue+uint32(k))
		}
	}
	s, err := compiled.Load("2.31.24")
	if err != nil {
		t.Fatal(err)
	}
	var first *spec.Constant
	for i := range s.Constants {
		if s.Constants[i].Name == "SEM_INC_FIRST_VALUE" {
			first = &s.Constants[i]
		}
	}
	if first == nil || first.Conf != spec.Inferred {
		t.Fatalf("SEM_INC_FIRST_VALUE is %+v, want an INFERRED constant", first)
	}
	found := false
	for _, c := range s.Contradictions {
		found = found || c.ID == "sem-buffer-loop" && c.Conf == spec.Inferred && strings.Contains(c.Chosen, "word k = k")
	}
	if !found {
		t.Fatal("contradiction sem-buffer-loop does not record the word k = k reading")
	}
}

func TestInitIsIdempotentAndWorldIsImmutable(t *testing.T) {
	rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
	if err := rt.InitGlobalComm(3, 2, 16, 0, "", true); err != nil {
		t.Fatal(err)
	}
	if err := rt.InitGlobalComm(3, 2, 16, 0, "", true); err != nil {
		t.Fatalf("same world again: %v", err)
	}
	if a := rt.Stats().GlobalCommAllocs; a != 1 {
		t.Fatalf("%d allocations for one world", a)
	}
	for _, w := range [][2]uint32{{2, 32}, {5, 16}} {
		err := rt.InitGlobalComm(3, w[0], w[1], 0, "", true)
		exactly(t, err, cfmt.Sprintf(abi.MsgGcommWorldMismatch, int32(16)))
		if Status(err) != abi.NRTInvalid {
			t.Fatalf("status %v", Status(err))
		}
	}
	// the other context is its own slot
	if err := rt.InitGlobalComm(3, 0, 2, 1, "", true); err != nil {
		t.Fatal(err)
	}
}

// 64 goroutines race InitGlobalComm on one device; a hook holds every one of
// them between the lock-free lookup and the lock, so all of them miss the
// fast path and only the post-lock check can stop a second allocation.
func TestRacingInitAllocatesOnce(t *testing.T) {
	const racers = 64
	run := func(t *testing.T, skipSecond bool) (allocs int64, failures int) {
		rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
		var missed sync.WaitGroup
		missed.Add(racers)
		rt.hooks.afterFastPath = func() { missed.Done(); missed.Wait() }
		rt.hooks.skipSecondCheck = skipSecond
		errs := each(racers, func(int) error { return rt.InitGlobalComm(5, 1, 4, 0, "", true) })
		for _, err := range errs {
			if err != nil {
				exactly(t, err, abi.MsgGcommSetFailed)
				failures++
			}
		}
		if rt.GlobalComm(5, 0) == nil || rt.Stats().GlobalComms != 1 {
			t.Fatal("no single registered comm after the race")
		}
		return rt.Stats().GlobalCommAllocs, failures
	}
	if allocs, failures := run(t, false); allocs != 1 || failures != 0 {
		t.Fatalf("double-checked: %d allocations, %d failures; want 1, 0", allocs, failures)
	}
	// the planted fault: without the second check every racer allocates
	if allocs, failures := run(t, true); allocs != racers || failures != racers-1 {
		t.Fatalf("planted single check: %d allocations, %d failures; the race test would not catch it", allocs, failures)
	}
}

// The same race without the hook, for the race detector.
func TestRacingInitPlain(t *testing.T) {
	rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
	noErrors(t, "InitGlobalComm", each(64, func(int) error { return rt.InitGlobalComm(7, 3, 8, 1, "", false) }))
	if a := rt.Stats().GlobalCommAllocs; a != 1 {
		t.Fatalf("%d allocations", a)
	}
}

func TestVirtualServerSize(t *testing.T) {
	rt := newRuntime(t, &testIDs{vss: 3}, &inproc.Comms{})
	err := rt.InitGlobalComm(0, 0, 8, 0, "", true)
	exactly(t, err, "virtual server size 3 is not a divisor of world size 8")
	if rt.GlobalComm(0, 0) != nil {
		t.Fatal("a refused comm was registered")
	}
	if err := rt.InitGlobalComm(0, 5, 6, 0, "", true); err != nil {
		t.Fatal(err)
	}
	if id := rt.GlobalComm(0, 0).Mirror().GetVirtualServerID(); id != 1 {
		t.Fatalf("virtual_server_id %d, want 5/3 = 1", id)
	}
}

func TestPodLimitsAreAsymmetric(t *testing.T) {
	for _, tc := range []struct {
		podType, node, size uint32
		msg                 string
	}{
		{uint32(abi.NECPodTypeNone), 1000, 0, ""},
		{uint32(abi.NECPodTypeP2P), 5, 8, ""},
		{uint32(abi.NECPodTypeP2P), 7, 8, ""},
		{uint32(abi.NECPodTypeP2P), 8, 8, "Invalid pod_node_id: 8 (pod_size: 8) pod_type:1"},
		{uint32(abi.NECPodTypeSwitch), 3, 8, ""},
		{uint32(abi.NECPodTypeSwitch), 5, 8, "Invalid pod_node_id: 5 (pod_size: 8) pod_type:2"},
		{uint32(abi.NECPodTypeSwitch), 4, 64, "Invalid pod_node_id: 4 (pod_size: 64) pod_type:2"},
		{uint32(abi.NECPodTypeInvalid), 0, 8, "Invalid pod_type: 3"},
		{9, 0, 8, "Invalid pod_type: 9"},
	} {
		ids := &testIDs{over: map[uint32]device.Identity{0: {PodType: tc.podType, PodNodeID: tc.node, PodSize: tc.size}}}
		rt := newRuntime(t, ids, &inproc.Comms{})
		err := rt.InitGlobalComm(0, 0, 1, 0, "", true)
		if tc.msg == "" {
			if err != nil {
				t.Fatalf("pod %d node %d size %d: %v", tc.podType, tc.node, tc.size, err)
			}
			if m := rt.GlobalComm(0, 0).Mirror(); m.GetPodType() != abi.NECPodType(tc.podType) || m.GetPodNodeID() != tc.node || m.GetPodSz() != tc.size {
				t.Fatalf("pod fields %v/%d/%d", m.GetPodType(), m.GetPodNodeID(), m.GetPodSz())
			}
			continue
		}
		exactly(t, err, tc.msg)
		if rt.GlobalComm(0, 0) != nil {
			t.Fatalf("pod %d node %d: refused comm registered", tc.podType, tc.node)
		}
	}
}

func TestInitFailures(t *testing.T) {
	t.Run("no core", func(t *testing.T) {
		rt := newRuntime(t, &testIDs{missing: map[uint32]bool{4: true}}, &inproc.Comms{})
		err := rt.InitGlobalComm(4, 0, 1, 0, "", true)
		exactly(t, err, "Failed to find core 4")
		if !strings.Contains(err.Error(), "not in the test topology") {
			t.Fatalf("the cause is lost: %v", err)
		}
	})
	// The MLA and the driver context are their own steps with their own
	// messages (docs/sources.md#s004-6), not a missing core.
	t.Run("no MLA", func(t *testing.T) {
		rt := newRuntime(t, &testIDs{noMLA: map[uint32]bool{4: true}}, &inproc.Comms{})
		err := rt.InitGlobalComm(4, 0, 1, 0, "", true)
		exactly(t, err, "Failed to get MLA")
		if Status(err) != abi.NRTInvalid || !errors.Is(err, device.ErrNoMLA) || rt.GlobalComm(4, 0) != nil {
			t.Fatalf("status %d, cause %v, comm %p", Status(err), err, rt.GlobalComm(4, 0))
		}
	})
	t.Run("no TDRV", func(t *testing.T) {
		rt := newRuntime(t, &testIDs{noTDRV: map[uint32]bool{4: true}}, &inproc.Comms{})
		err := rt.InitGlobalComm(4, 0, 1, 0, "", true)
		exactly(t, err, "TDRV not initialized!")
		if Status(err) != abi.NRTInvalid || !errors.Is(err, device.ErrNoTDRV) || rt.GlobalComm(4, 0) != nil {
			t.Fatalf("status %d, cause %v, comm %p", Status(err), err, rt.GlobalComm(4, 0))
		}
	})
	t.Run("mmap", func(t *testing.T) {
		rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
		rt.hooks.mmap = func(int) ([]byte, error) { return nil, errors.New("ENOMEM") }
		exactly(t, rt.InitGlobalComm(0, 0, 1, 0, "", true), abi.MsgGcommMmapFailed)
		if rt.GlobalComm(0, 0) != nil {
			t.Fatal("registered without a buffer")
		}
	})
	t.Run("set", func(t *testing.T) {
		rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
		rt.hooks.setFails = true
		exactly(t, rt.InitGlobalComm(0, 0, 1, 0, "", true), abi.MsgGcommSetFailed)
	})
	t.Run("arguments", func(t *testing.T) {
		rt := newRuntime(t, &testIDs{}, &inproc.Comms{})
		for _, err := range []error{
			rt.InitGlobalComm(0, 0, 1, 2, "", true),
			rt.InitGlobalComm(0, 0, 1, -1, "", true),
			rt.InitGlobalComm(0, 4, 4, 0, "", true),
			rt.InitGlobalComm(0, 0, 0, 0, "", true),
		} {
			if Status(err) != abi.NRTInvalid || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want a one-line NRT_INVALID, got %v", err)
			}
		}
	})
}

func TestValidateOutcomes(t *testing.T) {
	rt := newRuntime(t, &testIDs{missing: map[uint32]bool{9: true}}, &inproc.Comms{})
	// no comm yet: validate builds it
	if err := rt.ValidateGlobalComm(0, 0, 4, 0, "", true); err != nil || rt.GlobalComm(0, 0) == nil {
		t.Fatalf("validate without a comm: %v", err)
	}
	exactly(t, rt.ValidateGlobalComm(0, 0, 8, 0, "", true), "World size of neff 8 is greater than world size of global communicator 4")
	if err := rt.ValidateGlobalComm(0, 0, 4, 0, "", true); err != nil {
		t.Fatalf("equal world: %v", err)
	}
	exactly(t, rt.ValidateGlobalComm(0, 0, 2, 0, "", true), abi.MsgValidateNeffMismatch)

	// once the global comm is bootstrapped a smaller NEFF world passes
	wd := newWorld(t, 4, inproc.Options{})
	if err := wd.rt.ValidateGlobalComm(1, 1, 2, 0, "", true); err != nil {
		t.Fatalf("sub-world after bootstrap: %v", err)
	}
	exactly(t, wd.rt.ValidateGlobalComm(1, 1, 5, 0, "", true), "World size of neff 5 is greater than world size of global communicator 4")
	exactly(t, rt.ValidateGlobalComm(9, 0, 1, 0, "", true), "Failed to find core 9")

	// enc_validate_global_comm reads the core alone: a core whose MLA cannot
	// be read validates against its device's comm, and without a comm the
	// init it delegates to names the MLA.
	ids := &testIDs{noMLA: map[uint32]bool{5: true}, over: map[uint32]device.Identity{6: {NecDev: 5}}}
	rt2 := newRuntime(t, ids, &inproc.Comms{})
	exactly(t, rt2.ValidateGlobalComm(5, 0, 2, 0, "", true), "Failed to get MLA")
	if err := rt2.InitGlobalComm(6, 0, 2, 0, "", true); err != nil {
		t.Fatal(err)
	}
	if err := rt2.ValidateGlobalComm(5, 0, 2, 0, "", true); err != nil {
		t.Fatalf("validate through a core whose MLA cannot be read, device 5 has a comm: %v", err)
	}
}

func TestSetupAssertsInvariants(t *testing.T) {
	wd := newWorld(t, 3, inproc.Options{})
	for r := 0; r < 3; r++ {
		g := wd.rt.GlobalComm(r, 0)
		n := g.Node()
		if n == nil || !n.Mirror().GlobalNcclCommNode || n.Mirror() != &g.Mirror().NcclCommNode {
			t.Fatalf("rank %d: the global node is not the inline one", r)
		}
		if g.Mirror().LocalRings == 0 || g.Mirror().LocalPeerHandles == 0 {
			t.Fatal("local rings not allocated")
		}
		// a second setup only re-checks
		if err := wd.rt.SetupGlobalComm(r, 0, nil); err != nil {
			t.Fatal(err)
		}
	}

	// planted: libnccom reports another rank than the global id
	comms := &inproc.Comms{WrongRank: 1}
	rt := newRuntime(t, &testIDs{}, comms)
	w, _ := inproc.NewWorld(2, inproc.Options{})
	for r := 0; r < 2; r++ {
		if err := rt.InitGlobalComm(uint32(r), uint32(r), 2, 0, "", true); err != nil {
			t.Fatal(err)
		}
	}
	for r, err := range each(2, func(r int) error { return rt.SetupGlobalComm(r, 0, w.Endpoint(r)) }) {
		if err == nil || !strings.Contains(err.Error(), "comm.ci.rank") || !strings.Contains(err.Error(), "enc.cc:0x3E5F") {
			t.Fatalf("rank %d: want the broken invariant named, got %v", r, err)
		}
	}

	// wrong endpoint for the rank
	rt2 := newRuntime(t, &testIDs{}, &inproc.Comms{})
	if err := rt2.InitGlobalComm(0, 0, 2, 0, "", true); err != nil {
		t.Fatal(err)
	}
	if err := rt2.SetupGlobalComm(0, 0, w.Endpoint(1)); Status(err) != abi.NRTInvalid {
		t.Fatalf("mismatched endpoint: %v", err)
	}
	if err := rt2.SetupGlobalComm(1, 0, w.Endpoint(1)); Status(err) != abi.NRTInvalid {
		t.Fatalf("no comm: %v", err)
	}
}

func TestTeardown(t *testing.T) {
	wd := newWorld(t, 4, inproc.Options{})
	if _, errs := wd.bootstrap(groups(shuffled(4, 3), 2), 1, false); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if s := wd.rt.Stats(); s.GlobalComms != 4 || s.CommNodes != 8 {
		t.Fatalf("before teardown: %+v", s)
	}
	for r := 0; r < 4; r++ {
		if err := wd.rt.DestroyGlobalComm(r, 0); err != nil {
			t.Fatal(err)
		}
	}
	if s := wd.rt.Stats(); s.GlobalComms != 0 || s.CommNodes != 0 {
		t.Fatalf("after teardown: %+v", s)
	}
	if live := wd.comms.Stats().Live; live != 0 {
		t.Fatalf("%d comms still live", live)
	}
	if len(wd.rt.barriers.m) != 0 {
		t.Fatalf("%d local barriers left", len(wd.rt.barriers.m))
	}
	if err := wd.rt.InitGlobalComm(0, 0, 4, 0, "", true); err != nil {
		t.Fatalf("re-init after teardown: %v", err)
	}
	wd.rt.Close()
	if st := Status(wd.rt.InitGlobalComm(1, 1, 4, 0, "", true)); st != abi.NRTClosed {
		t.Fatalf("after Close: %v", st)
	}
	if wd.rt.Stats().GlobalComms != 0 {
		t.Fatal("Close left a comm")
	}
}
