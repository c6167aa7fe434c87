package collectives

import (
	"slices"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
	"github.com/nrtabi/nrtabi/runtime/transport/nccl"
)

// The bootstrap runs unchanged over the libnccom-trampoline transport; here
// its Bootstrap is the in-process implementation.
func TestBootstrapOverNcclTransport(t *testing.T) {
	const n = 8
	comms := &inproc.Comms{}
	rt := newRuntime(t, &testIDs{}, comms)
	w, _ := inproc.NewWorld(n, inproc.Options{Trace: true})
	boot := inproc.NewBootstrap(w)
	for r := 0; r < n; r++ {
		if err := rt.InitGlobalComm(uint32(r), uint32(r), n, 0, "", true); err != nil {
			t.Fatal(err)
		}
	}
	noErrors(t, "setup", each(n, func(r int) error {
		tr, err := nccl.New(boot, boot.State(r), r, n, "get_nccl_comm")
		if err != nil {
			return err
		}
		return rt.SetupGlobalComm(r, 0, tr)
	}))
	w.ResetStats()
	wd := &world{rt: rt, w: w, comms: comms, n: n}
	bp := shuffled(n, 11)
	_, errs := wd.bootstrap(groups(bp, 2), 3, false)
	noErrors(t, "bootstrap", errs)
	if got := sortTrace(w.Trace()); !slices.Equal(got, expectedTrace(bp)) {
		t.Fatalf("messages %v", got)
	}
	if h := boot.Hints()["get_nccl_comm"]; h != 4*2*(n-1) {
		t.Fatalf("%d bootstrap calls, want a send and a recv per message of two bootstraps", h)
	}
	rgs := groups(bp, 2)
	rgs[bp[n-1]].Signature[15] = 1
	_, errs = wd.bootstrap(rgs, 2, false)
	for gid, err := range errs {
		exactly(t, err, sigFailed(gid))
	}
}
