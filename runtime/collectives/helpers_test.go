package collectives

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// testIDs is a small device.IdentitySource: virtual core v is NeuronCore v,
// with identity fields derived from v so a mirror field copied from the wrong
// place shows.
type testIDs struct {
	vss     uint32
	missing map[uint32]bool
	noMLA   map[uint32]bool // the core exists (device vnc), its MLA cannot be read
	noTDRV  map[uint32]bool // the core exists (device vnc), the driver context does not
	over    map[uint32]device.Identity
}

func (s *testIDs) CoreIdentity(vnc uint32) (device.Identity, error) {
	if vnc >= uint32(abi.NECMaxDevices) || s.missing[vnc] {
		return device.Identity{}, fmt.Errorf("virtual core %d is not in the test topology", vnc)
	}
	if s.noMLA[vnc] {
		return device.Identity{NecDev: int(vnc)}, fmt.Errorf("virtual core %d: %w", vnc, device.ErrNoMLA)
	}
	if s.noTDRV[vnc] {
		return device.Identity{NecDev: int(vnc)}, fmt.Errorf("virtual core %d: %w", vnc, device.ErrNoTDRV)
	}
	if id, ok := s.over[vnc]; ok {
		return id, nil
	}
	return device.Identity{NecDev: int(vnc), MLAIdx: int(vnc / 2), HostDeviceID: int(vnc) + 100, RoutingID: int(vnc) ^ 5,
		VtpbIdx: vnc + 7, ReservationID: 0xabc000 + uint64(vnc)}, nil
}

func (s *testIDs) VirtualServerSize() uint32 { return s.vss }

var quiet = slog.New(slog.DiscardHandler)

func newRuntime(t testing.TB, ids device.IdentitySource, comms Comms) *Runtime {
	t.Helper()
	rt, err := New(ids, comms, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// each runs f for every rank on its own goroutine and returns the errors.
func each(n int, f func(r int) error) []error {
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

func noErrors(t testing.TB, what string, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%s: rank %d: %v", what, r, err)
		}
	}
}

// world is n ranks in one process: NeuronCores 0..n-1 of one Runtime, global
// device r on core r, over an in-process transport, global comms set up.
type world struct {
	rt    *Runtime
	w     *inproc.World
	comms *inproc.Comms
	n     int
	// closeOnFail closes a failing rank's endpoint, as a dying process would,
	// so peers still waiting on it fail instead of timing out.
	closeOnFail bool
}

func newWorld(t testing.TB, n int, opt inproc.Options) *world {
	t.Helper()
	comms := &inproc.Comms{}
	rt := newRuntime(t, &testIDs{}, comms)
	w, err := inproc.NewWorld(n, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	for r := 0; r < n; r++ {
		if err := rt.InitGlobalComm(uint32(r), uint32(r), uint32(n), 0, "127.0.0.1:62182", true); err != nil {
			t.Fatal(err)
		}
	}
	noErrors(t, "SetupGlobalComm", each(n, func(r int) error { return rt.SetupGlobalComm(r, 0, w.Endpoint(r)) }))
	w.ResetStats()
	return &world{rt: rt, w: w, comms: comms, n: n}
}

// groups is one replica group as each rank of the world sees it: every rank
// takes part, in the bootstrap order perm (perm[i] is bootstrap rank i's
// global device id).
func groups(perm []uint32, groupID int) []*ReplicaGroup {
	n := len(perm)
	out := make([]*ReplicaGroup, n)
	for i, gid := range perm {
		out[gid] = &ReplicaGroup{Rank: abi.EncRgSendrecvRank, RankN: n, GroupID: groupID, SrcTargetPairsID: -1,
			Participants: perm, BootstrapParticipants: perm, BootstrapRank: i}
	}
	return out
}

func identity(n int) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	return p
}

func shuffled(n int, seed uint64) []uint32 {
	p := identity(n)
	rand.New(rand.NewPCG(seed, 1)).Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// bootstrap runs GetNcclComm on every rank at once.
func (wd *world) bootstrap(rgs []*ReplicaGroup, stream int, disableGraph bool) ([]*CommNode, []error) {
	nodes := make([]*CommNode, wd.n)
	errs := each(wd.n, func(r int) error {
		n, err := wd.rt.GetNcclComm(rgs[r], r, 0, stream, disableGraph)
		nodes[r] = n
		if err != nil && wd.closeOnFail {
			_ = wd.w.Endpoint(r).Close()
		}
		return err
	})
	return nodes, errs
}

// exactly checks err is this package's *Error carrying message msg.
func exactly(t testing.TB, err error, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *collectives.Error", err)
	}
	if e.Msg != msg {
		t.Fatalf("message %q, want %q", e.Msg, msg)
	}
}

func sigFailed(gid int) string { return cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(gid)) }
