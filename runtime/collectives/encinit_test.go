package collectives

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// New is enc_init (docs/sources.md#s004-6): arch_init, then ncclInit, then
// the two locks of every device, stopping at the first failure with its
// message logged and no Runtime made.
func TestEncInitSequence(t *testing.T) {
	var steps []string
	step := func(name string, err error) func() error {
		return func() error { steps = append(steps, name); return err }
	}
	newWith := func(opt Options) (*Runtime, string, error) {
		var log bytes.Buffer
		opt.Logger = slog.New(slog.NewTextHandler(&log, nil))
		steps = nil
		rt, err := New(&testIDs{}, &inproc.Comms{}, opt)
		if rt != nil {
			t.Cleanup(rt.Close)
		}
		return rt, log.String(), err
	}

	rt, _, err := newWith(Options{ArchInit: step("arch", nil), NcclInit: step("nccl", nil)})
	if err != nil || rt == nil || strings.Join(steps, ",") != "arch,nccl" {
		t.Fatalf("good init: %v, steps %v", err, steps)
	}

	archErr := errors.New("no such architecture")
	rt, log, err := newWith(Options{ArchInit: step("arch", archErr), NcclInit: step("nccl", nil)})
	exactly(t, err, "enc_init: arch_init failed")
	if rt != nil || !errors.Is(err, archErr) || strings.Join(steps, ",") != "arch" || !strings.Contains(log, "arch_init failed") {
		t.Fatalf("arch_init failure: runtime %p, err %v, steps %v, log %q", rt, err, steps, log)
	}

	ncclErr := errors.New("Incompatible version of aws-neuronx-collectives")
	rt, log, err = newWith(Options{ArchInit: step("arch", nil), NcclInit: step("nccl", ncclErr)})
	exactly(t, err, "enc_init: ncclInit failed")
	if rt != nil || !errors.Is(err, ncclErr) || Status(err) != abi.NRTFailure || strings.Join(steps, ",") != "arch,nccl" || !strings.Contains(log, "ncclInit failed") {
		t.Fatalf("ncclInit failure: runtime %p, err %v, steps %v, log %q", rt, err, steps, log)
	}

	// pthread_mutex_init failing on one device's init lock, then on
	// another's setup lock: each has its own message row, with the code
	defer func(orig func(int, bool) int) { lockInit = orig }(lockInit)
	for _, tc := range []struct {
		dev   int
		setup bool
		msg   string
	}{
		{7, false, "Failed to create global comm init lock (ret=22)"},
		{200, true, "Failed to create global comm setup lock (ret=22)"},
	} {
		var seen []int
		lockInit = func(dev int, setup bool) int {
			if !setup {
				seen = append(seen, dev)
			}
			if dev == tc.dev && setup == tc.setup {
				return 22 // EINVAL
			}
			return 0
		}
		rt, log, err = newWith(Options{ArchInit: step("arch", nil), NcclInit: step("nccl", nil)})
		exactly(t, err, tc.msg)
		if rt != nil || Status(err) != abi.NRTFailure || !strings.Contains(log, tc.msg) {
			t.Fatalf("lock failure: runtime %p, err %v, log %q", rt, err, log)
		}
		if len(seen) != tc.dev+1 || seen[len(seen)-1] != tc.dev {
			t.Fatalf("locks initialised for devices %v before the failure on %d: want 0..%d in order", seen, tc.dev, tc.dev)
		}
	}
}
