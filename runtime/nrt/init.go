package nrt

/*
#include <stdlib.h>
#include "nrt_slots.h"
#include "handoff.h"
*/
import "C"

import (
	"fmt"
	"os"

	"github.com/nrtabi/nrtabi/generated/abi"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Options select what Init loads. The zero value is the shipped runtime's
// behaviour: the spec's library names, resolved by the normal search path.
type Options struct {
	// Library is what ncclInit dlopens; "" means DefaultLibrary
	// ("libnccom.so"). Tests point it at a test double.
	Library string
	// NetLibrary is the net plugin loaded softly after a successful
	// handoff; "" means $NRTABI_NET_PLUGIN (EnvNetPlugin), else
	// DefaultNetLibrary ("libnccom-net.so") through the search path.
	NetLibrary string
}

// EnvNetPlugin names the net plugin to load instead of the default: on a
// real Neuron host, the installed libnccom-net.so; in the tests, the vendor
// plugin built from source or the plugin double
// (docs/runtime-boundary.md#the-net-plugin).
const EnvNetPlugin = "NRTABI_NET_PLUGIN"

// NetPluginTables are the table symbols a net plugin exports, newest first
// (spec release.toml [release.libnccom_net] object, a test holds this list
// to it): a file that loads but exports none of them is refused by name.
var NetPluginTables = []string{abi.NcclNetPluginV6Symbol, abi.NcclNetPluginV5Symbol, abi.NcclNetPluginV4Symbol}

// Stage is where the handoff stopped.
type Stage int

// The stages, in the order the handoff passes them.
const (
	StageOK           Stage = C.NRT_HANDOFF_OK
	StageDlopen       Stage = C.NRT_HANDOFF_DLOPEN
	StageNoProbe      Stage = C.NRT_HANDOFF_NO_PROBE
	StageIncompatible Stage = C.NRT_HANDOFF_INCOMPATIBLE
	StageMissing      Stage = C.NRT_HANDOFF_MISSING
)

func (s Stage) String() string {
	switch s {
	case StageOK:
		return "ok"
	case StageDlopen:
		return "dlopen failed"
	case StageNoProbe:
		return "no version probe"
	case StageIncompatible:
		return "incompatible"
	case StageMissing:
		return "missing entry point"
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// Outcome is what the one handoff of this process did. It never changes
// once Init has returned.
type Outcome struct {
	Options Options // as used, defaults filled in
	Status  Status  // NRT_SUCCESS, or NRT_FAILURE with the sentinel armed
	Stage   Stage
	Missing string // the first entry point dlsym did not find (StageMissing)
	Probed  bool   // the version probe ran; Version holds its answer
	Version VersionInfo
	// Message is what the init-error sentinel recorded ("" on success):
	// the exact text every guarded call will log.
	Message string
}

// Err is nil for a successful handoff, else an *InitError.
func (o *Outcome) Err() error {
	if o.Stage == StageOK {
		return nil
	}
	return &InitError{Stage: o.Stage, Message: o.Message}
}

// InitError is a failed handoff: collectives are unavailable for the life of
// the process and every guarded forward call returns NRT_FAILURE.
type InitError struct {
	Stage   Stage
	Message string
}

func (e *InitError) Error() string { return "ncclInit: " + e.Message }
func (e *InitError) Unwrap() error { return ErrFailure }

var (
	initOnce sync.Once
	outcome  Outcome
	initDone atomic.Bool // the handoff has run, whatever its result
	ready    atomic.Bool // the handoff succeeded: all slots are valid
)

// Init runs the forward handoff (ncclInit) once per process: dlopen the
// library, gate on the version probe's compatibility id, dlsym the other
// entry points in order, all or nothing, then softly load the net plugin.
// Every caller, concurrent or later, waits for that one run and gets its
// outcome; the Options of callers after the first are ignored.
func Init(opts Options) (*Outcome, error) {
	initOnce.Do(func() { outcome = handoff(opts) })
	return &outcome, outcome.Err()
}

func handoff(opts Options) Outcome {
	if opts.Library == "" {
		opts.Library = DefaultLibrary
	}
	if opts.NetLibrary == "" {
		opts.NetLibrary = os.Getenv(EnvNetPlugin)
	}
	if opts.NetLibrary == "" {
		opts.NetLibrary = DefaultNetLibrary
	}
	lib, net := C.CString(opts.Library), C.CString(opts.NetLibrary)
	defer C.free(unsafe.Pointer(lib))
	defer C.free(unsafe.Pointer(net))
	tables := C.malloc(C.size_t(len(NetPluginTables)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(tables)
	names := unsafe.Slice((**C.char)(tables), len(NetPluginTables)+1)
	for i, n := range NetPluginTables {
		names[i] = C.CString(n)
		defer C.free(unsafe.Pointer(names[i]))
	}
	names[len(NetPluginTables)] = nil

	var out C.struct_nrt_handoff_outcome
	rc := C.nrt_handoff_run(lib, net, (**C.char)(tables), &out)
	o := Outcome{Options: opts, Status: Status(rc), Stage: Stage(out.stage), Probed: out.probed != 0}
	o.Version = *(*VersionInfo)(unsafe.Pointer(&out.version))
	if out.missing >= 0 {
		o.Missing = Forward[int(out.missing)].Name
	}
	o.Message = sentinel()
	initDone.Store(true)
	ready.Store(o.Stage == StageOK)
	return o
}

func sentinel() string {
	var buf [1100]C.char
	C.nrt_handoff_sentinel(&buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}

// State is the forward table and the sentinel as they are now.
type State struct {
	Initialised bool   // Init has run
	ValidSlots  int    // non-NULL slots: all or none
	Armed       bool   // the init-error sentinel holds a message
	Message     string // what it holds
	NetPlugin   bool   // the net plugin is loaded
	NetError    string // why it is not
}

// CurrentState reads the live table and sentinel.
func CurrentState() State {
	s := State{Initialised: initDone.Load(), ValidSlots: int(C.nrt_handoff_valid_slots())}
	s.Message = sentinel()
	s.Armed = s.Message != ""
	s.NetPlugin = C.nrt_nccl_net_handle != nil
	s.NetError = C.GoString(&C.nrt_nccl_net_error[0])
	return s
}

// NumSlots is the size of the forward table.
const NumSlots = C.NRT_NCCL_SLOT_COUNT

// mustInit is the Go layer's own precondition: before the handoff has run
// the slots are NULL and the sentinel is not yet armed, so no trampoline may
// be entered. It is an atomic load, not a second guard on the sentinel.
func mustInit(symbol string) error {
	if !initDone.Load() {
		return &CallError{Symbol: symbol, Status: ErrUninitialized}
	}
	return nil
}
