package nrt

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/runtime/device"
)

// The device layer the reverse callbacks answer from.
var (
	deviceLayer   atomic.Pointer[layerBox]
	defaultOnce   sync.Once
	defaultDevice device.Layer
)

type layerBox struct{ l device.Layer }

// DeviceABI is what this release tells the (release-independent) device
// layer: nec_pod_type_t codes, the unknown-core message and the sizes a
// topology must fit.
func DeviceABI() device.ABI {
	codes := map[string]uint32{}
	for _, p := range podTypes {
		codes[strings.ToLower(strings.TrimPrefix(p.String(), "NEC_POD_TYPE_"))] = uint32(p)
	}
	// A release may lack arch_name or device_revision
	// (docs/generator.md#absent-fields): it reports none, so a topology's
	// value has nothing to fit (limit 0).
	var info InstanceInfo
	maxArch, maxRev := 0, 0
	if arch, ok := info.GetArchName(); ok {
		maxArch = len(arch[:])
	}
	if rev, ok := info.GetDeviceRevision(); ok {
		maxRev = len(rev[:])
	}
	return device.ABI{
		PodTypes: codes, MsgNoCore: msgNoCore,
		MaxArchName: maxArch, MaxDeviceRevision: maxRev, MaxDevices: maxDevices,
	}
}

// LoadTopology reads a simulated-topology file for this release.
func LoadTopology(path string) (*device.Topology, error) {
	return device.LoadTopology(path, DeviceABI())
}

// SetDevice installs the device layer the reverse callbacks answer from.
// Until one is set they answer from the embedded default topology.
func SetDevice(l device.Layer) { deviceLayer.Store(&layerBox{l}) }

// Device is the device layer in use.
func Device() device.Layer {
	if b := deviceLayer.Load(); b != nil {
		return b.l
	}
	defaultOnce.Do(func() {
		t, err := device.Default(DeviceABI())
		if err != nil {
			// The embedded file is checked by the tests; failing here is a
			// build defect, not an input error.
			panic("nrt: the embedded default topology does not load: " + err.Error())
		}
		defaultDevice = t
	})
	return defaultDevice
}

// traceReverse logs one reverse callback at DEBUG, only when enabled.
func traceReverse(callback string, args ...any) {
	l := runtimeLog()
	if !l.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	l.Debug("reverse", append([]any{"callback", callback}, args...)...)
}
