package collectives

import "github.com/nrtabi/nrtabi/generated/abi"

// ValidateGlobalComm is enc_validate_global_comm, the load-time guard: with no
// comm yet it builds one (InitGlobalComm); a NEFF world bigger than the comm's
// is refused; an equal world, or any world once the comm is bootstrapped,
// passes; a smaller world before the bootstrap is refused with the hint to
// build the global comm first.
func (r *Runtime) ValidateGlobalComm(vnc, gDeviceID, gDeviceCount uint32, ctx int, rootCommID string, checkSigs bool) error {
	id, err := r.openCore(vnc, ctx, false)
	if err != nil {
		return err
	}
	g := r.slots[id.NecDev][ctx].Load()
	if g == nil {
		return r.InitGlobalComm(vnc, gDeviceID, gDeviceCount, ctx, rootCommID, checkSigs)
	}
	if g.m.GetGDeviceCnt() < gDeviceCount {
		return r.logged(fail(abi.NRTInvalid, nil, abi.MsgValidateNeffBigger, int32(gDeviceCount), int32(g.m.GetGDeviceCnt())))
	}
	if g.m.GetGDeviceCnt() == gDeviceCount || g.Node() != nil {
		return nil
	}
	return r.logged(fail(abi.NRTInvalid, nil, abi.MsgValidateNeffMismatch))
}
