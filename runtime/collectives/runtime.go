// Package collectives is the libnrt side of collective-world setup (docs/sources.md#s004):
// the global communicator registry keyed by (nec_dev, ctx), the comm-node pool
// keyed by the byte image of bootstrap_participants, the two-level MD5
// op-signature and the per-NC node bootstrap (get_nccl_comm) that AND-reduces
// the signatures up a binary tree and broadcasts the unique id down a
// hypercube before any comm is initialised.
//
// Objects a C reader sees (enc_glb_comm, enc_nccl_comm_node, the semaphore
// increment buffer) live outside the Go heap with the spec layout and are
// reached through the generated abi mirrors.
package collectives

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/device"
)

// DefaultBarrierTimeout bounds the local barrier of a comm node.
const DefaultBarrierTimeout = time.Minute

// Options shape a Runtime.
type Options struct {
	Logger         *slog.Logger  // nil: slog.Default()
	BarrierTimeout time.Duration // 0: DefaultBarrierTimeout
	// ArchInit is arch_init, enc_init's first step (docs/sources.md#s004-6).
	// nil: the process has no architecture layer to initialise (the
	// simulated device layer has none); New says so at debug level.
	ArchInit func() error
	// NcclInit is ncclInit, enc_init's second step: the forward handoff that
	// dlopens libnccom (docs/sources.md#s000-2). It runs once per process,
	// so a caller whose handoff already ran passes a function reporting that
	// run's outcome (runtime/nrt.Init does). nil: comms is not a libnccom
	// behind the trampolines (a native or in-process transport), so there is
	// nothing to hand off to; New says so at debug level.
	NcclInit func() error
	// GroupInit is how a replica group's own comm init bootstraps
	// (EnvGroupInit, GroupInitFromEnv); the zero value is the default,
	// split. GroupHierarchy true is GroupInit hier.
	GroupInit      GroupInit
	GroupHierarchy bool
}

// Runtime is one process's collectives state (what enc_init builds and
// enc_destroy_gcomm_locks tears down): per-device locks, the two-slot global
// comm table of every device, the comm-node pools and the local barriers.
// Every NeuronCore of the process is a device of the same Runtime.
type Runtime struct {
	ids            device.IdentitySource
	comms          Comms
	log            *slog.Logger
	barrierTimeout time.Duration
	groupMode      GroupInit // Options.GroupInit

	initMtx  [abi.NECMaxDevices]sync.Mutex // gcomm_init_mtx
	setupMtx [abi.NECMaxDevices]sync.Mutex // gcomm_setup_mtx
	poolMtx  [abi.NECMaxDevices]sync.Mutex // one device's comm-node pools
	slots    [abi.NECMaxDevices][abi.EncdMaxContexts]atomic.Pointer[GlobalComm]
	pools    [abi.NECMaxDevices][abi.EncdMaxContexts][abi.EncMaxStreamN]map[string]*CommNode
	barriers barrierHub
	locals   localSets // global ids registered per ctx

	closed atomic.Bool
	allocs atomic.Int64 // enc_glb_comm allocations, ever
	hooks  hooks
}

// hooks let the package's own tests plant faults; they are zero otherwise.
type hooks struct {
	afterFastPath    func()                    // between the lock-free lookup and the lock
	skipSecondCheck  bool                      // drop the post-lock lookup (the bug the GOTCHA warns of)
	mmap             func(int) ([]byte, error) // replaces the semaphore buffer's mmap
	setFails         bool                      // encd_set_global_comm refuses
	gateOnLocalMatch bool                      // trust the local compare (the bug the GOTCHA warns of)
	bindWithoutOps   bool                      // bind comm->{id, stream_id} of a group with no ops
	splitBinding     func()                    // write id and stream_id as two stores, calling this between them
}

// New is enc_init (docs/sources.md#s004-6), in the seed's order: arch_init
// (opt.ArchInit), ncclInit (opt.NcclInit), then the init lock and the setup
// lock of each of the NEC_MAX_DEVICES devices; the first failure ends it and
// no Runtime is made. ids describes the cores; comms is libnccom's comm layer.
//
// pthread_mutex_init can fail; a Go mutex cannot, so the two lock messages
// (gcomm_init_lock_failed, gcomm_setup_lock_failed) fire only when the
// package's lock initialiser reports a pthread-style error code, which only
// its tests make it do.
func New(ids device.IdentitySource, comms Comms, opt Options) (*Runtime, error) {
	if ids == nil {
		return nil, fmt.Errorf("collectives.New: no device identity source")
	}
	if comms == nil {
		return nil, fmt.Errorf("collectives.New: no comm layer (ncclGetUniqueId/ncclInitComm)")
	}
	r := &Runtime{ids: ids, comms: comms, log: opt.Logger, barrierTimeout: opt.BarrierTimeout, groupMode: opt.GroupInit}
	if opt.GroupHierarchy {
		r.groupMode = GroupInitHier
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.barrierTimeout <= 0 {
		r.barrierTimeout = DefaultBarrierTimeout
	}
	for _, step := range []struct {
		name string
		run  func() error
	}{{"arch_init", opt.ArchInit}, {"ncclInit", opt.NcclInit}} {
		if step.run == nil {
			r.log.Debug("enc_init: no " + step.name + " to run")
			continue
		}
		if err := step.run(); err != nil {
			return nil, r.logged(&Error{Status: abi.NRTFailure, Msg: "enc_init: " + step.name + " failed", Err: err})
		}
	}
	for dev := range abi.NECMaxDevices {
		if ret := lockInit(dev, false); ret != 0 {
			return nil, r.logged(fail(abi.NRTFailure, nil, abi.MsgGcommInitLockFailed, int32(ret)))
		}
		if ret := lockInit(dev, true); ret != 0 {
			return nil, r.logged(fail(abi.NRTFailure, nil, abi.MsgGcommSetupLockFailed, int32(ret)))
		}
	}
	r.barriers.m = map[string]*localBarrier{}
	return r, nil
}

// lockInit is pthread_mutex_init of device dev's init lock (setup false) or
// setup lock (setup true): 0 on success, else the error code. The locks are
// Go mutexes, ready at their zero value, so it always succeeds; the package's
// tests replace it to see the failure messages.
var lockInit = func(dev int, setup bool) int { return 0 }

// Stats is what the runtime has done so far.
type Stats struct {
	GlobalCommAllocs int64 // enc_glb_comm objects ever allocated
	GlobalComms      int   // registered now
	CommNodes        int   // pooled now, over every device, ctx and stream
}

// Stats reports the counters.
func (r *Runtime) Stats() Stats {
	s := Stats{GlobalCommAllocs: r.allocs.Load()}
	for dev := range r.slots {
		for ctx := range r.slots[dev] {
			if r.slots[dev][ctx].Load() != nil {
				s.GlobalComms++
			}
		}
		r.poolMtx[dev].Lock()
		for ctx := range r.pools[dev] {
			for _, p := range r.pools[dev][ctx] {
				s.CommNodes += len(p)
			}
		}
		r.poolMtx[dev].Unlock()
	}
	return s
}

// GlobalComm is encd_get_global_comm: the registered comm of (dev, ctx), or nil.
func (r *Runtime) GlobalComm(dev, ctx int) *GlobalComm {
	if dev < 0 || dev >= abi.NECMaxDevices || ctx < 0 || ctx >= abi.EncdMaxContexts {
		return nil
	}
	return r.slots[dev][ctx].Load()
}

func checkDevCtx(dev, ctx int) *Error {
	if dev < 0 || dev >= abi.NECMaxDevices {
		return invalid("nec_dev %d is outside 0..%d (NEC_MAX_DEVICES)", dev, abi.NECMaxDevices-1)
	}
	if ctx < 0 || ctx >= abi.EncdMaxContexts {
		return invalid("ctx_id %d is outside 0..%d (ENCD_MAX_CONTEXTS): 0 is the NEFF-loaded comm, 1 the standalone user comm", ctx, abi.EncdMaxContexts-1)
	}
	return nil
}

func (r *Runtime) checkOpen() *Error {
	if r.closed.Load() {
		return &Error{Status: abi.NRTClosed, Msg: "collectives runtime is closed: create a new one with collectives.New"}
	}
	return nil
}

// Close is nrt_close's share: every global comm of every device is torn down
// (its nodes, buffers and C memory released) and the runtime refuses further
// calls. It is safe to call twice.
func (r *Runtime) Close() {
	if r.closed.Swap(true) {
		return
	}
	for dev := range r.slots {
		for ctx := range r.slots[dev] {
			r.destroy(dev, ctx)
		}
	}
}
