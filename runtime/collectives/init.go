package collectives

import (
	"errors"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/device"
)

// deviceBarrierTableSize is the operator new(0x18) stored at +564400.
const deviceBarrierTableSize = 0x18

// InitGlobalComm is enc_init_global_comm: it registers the global comm of the
// device behind virtual core vnc for context ctx, as rank gDeviceID of a world
// of gDeviceCount. A second call with the same world succeeds without
// allocating; a different world is refused. The lookup is double-checked: once
// without the device lock (the fast path) and again under it, so racing
// callers on one device allocate exactly one comm.
func (r *Runtime) InitGlobalComm(vnc, gDeviceID, gDeviceCount uint32, ctx int, rootCommID string, checkSigs bool) error {
	id, err := r.openCore(vnc, ctx, true)
	if err != nil {
		return err
	}
	// The seed stores the world as given; refusing a rank outside it here is
	// ours (extension global-init-rank-range).
	if gDeviceCount == 0 || gDeviceID >= gDeviceCount {
		return invalid("g_device_id %d is not a rank of a world of %d devices", gDeviceID, gDeviceCount)
	}
	dev := id.NecDev

	if g := r.slots[dev][ctx].Load(); g != nil { // the idempotent fast path
		return r.sameWorld(g, gDeviceID, gDeviceCount)
	}
	if h := r.hooks.afterFastPath; h != nil {
		h()
	}

	r.initMtx[dev].Lock()
	defer r.initMtx[dev].Unlock()
	if !r.hooks.skipSecondCheck {
		if g := r.slots[dev][ctx].Load(); g != nil {
			return r.sameWorld(g, gDeviceID, gDeviceCount)
		}
	}
	vss := r.ids.VirtualServerSize()

	m := newGlbCommMirror()
	if m == nil {
		return &Error{Status: abi.NRTFailHostMemAlloc, Msg: "calloc of enc_glb_comm failed"}
	}
	r.allocs.Add(1)
	g := &GlobalComm{dev: dev, ctx: ctx, m: m}
	ok := false
	defer func() {
		if !ok {
			g.release()
		}
	}()

	if vss != 0 {
		if gDeviceCount%vss != 0 {
			return r.logged(fail(abi.NRTInvalid, nil, abi.MsgGcommVssDivisor, vss, gDeviceCount))
		}
		m.SetVirtualServerID(gDeviceID / vss)
	}
	m.SetGDeviceID(gDeviceID)
	m.SetGDeviceCnt(gDeviceCount)
	m.SetVtpbIdx(id.VtpbIdx)
	m.SetReservationID(id.ReservationID)
	m.SetPodSz(id.PodSize)
	m.SetNECDevID(int32(id.NecDev))
	m.SetMLAIdx(int32(id.MLAIdx))
	m.SetHostDeviceID(int32(id.HostDeviceID))
	m.SetRoutingID(int32(id.RoutingID))
	g.rootID = cstring(rootCommID)
	m.RootCommID = uintptr(g.rootID)
	m.SetPodType(abi.NECPodType(id.PodType))
	m.SetPodNodeID(id.PodNodeID)
	m.CheckSigs = checkSigs
	g.barriers = calloc(deviceBarrierTableSize)
	m.DeviceBarrierTable = uintptr(g.barriers)
	m.SetIncRecvSemValuesBufferSize(abi.SemIncBufferSize)

	mm := mmapAnon
	if r.hooks.mmap != nil {
		mm = r.hooks.mmap
	}
	buf, merr := mm(int(abi.SemIncBufferSize))
	if merr != nil {
		return r.logged(fail(abi.NRTFailure, merr, abi.MsgGcommMmapFailed))
	}
	g.sem = buf
	m.IncRecvSemValuesBuffer = uintptr(unsafe.Pointer(&buf[0]))
	fillSemValues(buf)

	if err := checkPod(id); err != nil {
		return r.logged(err)
	}

	if r.hooks.setFails || !r.slots[dev][ctx].CompareAndSwap(nil, g) {
		return r.logged(fail(abi.NRTFailure, nil, abi.MsgGcommSetFailed))
	}
	ok = true
	r.locals.set(ctx, gDeviceID, true)
	r.log.Debug("global comm registered", "nec_dev", dev, "ctx", ctx, "g_device_id", gDeviceID, "g_device_cnt", gDeviceCount)
	return nil
}

// openCore is the common entry of the global-comm calls: the runtime is
// open, vnc names a core, and its device and ctx are in range. whole asks
// for every step of enc_init_global_comm's lookup (core, MLA, TDRV); without
// it only the core is needed (enc_validate_global_comm reads nec_dev alone).
func (r *Runtime) openCore(vnc uint32, ctx int, whole bool) (device.Identity, error) {
	if err := r.checkOpen(); err != nil {
		return device.Identity{}, err
	}
	id, ierr := r.coreIdentity(vnc, whole)
	if ierr != nil {
		return id, ierr
	}
	if err := checkDevCtx(id.NecDev, ctx); err != nil {
		return id, err
	}
	return id, nil
}

// coreIdentity is the first three steps of enc_init_global_comm, each
// failing with its own message row (docs/sources.md#s004-6): the core
// (gcomm_no_core), its MLA (gcomm_no_mla), the driver context
// (gcomm_no_tdrv). The seed gives no status for the last two; they keep the
// core's NRT_INVALID.
func (r *Runtime) coreIdentity(vnc uint32, whole bool) (device.Identity, *Error) {
	id, err := r.ids.CoreIdentity(vnc)
	if err == nil {
		return id, nil
	}
	var format string
	var args []any
	switch {
	case errors.Is(err, device.ErrNoMLA):
		format = abi.MsgGcommNoMLA
	case errors.Is(err, device.ErrNoTDRV):
		format = abi.MsgGcommNoTdrv
	default:
		format, args = abi.MsgGcommNoCore, []any{vnc}
	}
	if format != abi.MsgGcommNoCore && !whole {
		return id, nil // the core was found; its device is all the caller reads
	}
	return id, r.logged(fail(abi.NRTInvalid, err, format, args...))
}

// sameWorld is the re-entry check: the world size and rank are immutable.
func (r *Runtime) sameWorld(g *GlobalComm, gDeviceID, gDeviceCount uint32) error {
	if g.m.GetGDeviceID() != gDeviceID || g.m.GetGDeviceCnt() != gDeviceCount {
		return r.logged(fail(abi.NRTInvalid, nil, abi.MsgGcommWorldMismatch, g.m.GetGDeviceCnt()))
	}
	return nil
}

// checkPod validates the pod with the asymmetric limits: a P2P pod node must
// be below the pod size, a SWITCH pod node below 4, NONE is not checked.
func checkPod(id device.Identity) *Error {
	pt := abi.NECPodType(id.PodType)
	if pt > abi.NECPodTypeSwitch {
		return fail(abi.NRTInvalid, nil, abi.MsgGcommInvalidPodType, id.PodType)
	}
	if pt == abi.NECPodTypeNone {
		return nil
	}
	limit := abi.SwitchPodMaxNodes
	if pt == abi.NECPodTypeP2P {
		limit = id.PodSize
	}
	if id.PodNodeID >= limit {
		return fail(abi.NRTInvalid, nil, abi.MsgGcommInvalidPodNode, id.PodNodeID, id.PodSize, int32(id.PodType))
	}
	return nil
}

func (r *Runtime) logged(e *Error) *Error {
	r.log.Error(e.Error(), "status", e.Status)
	return e
}
