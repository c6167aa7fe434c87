package tcp

// VNCCounter is libnrt's nrt_get_total_vnc_count() as the bootstrap sees it:
// non-zero is the single-vNC regime, where there is no peer to reach and the
// bootstrap does nothing (docs/sources.md#s001-3-gotcha). The real libnrt answers it;
// until it is wired here, a process reports FixedVNC(0).
type VNCCounter interface {
	TotalVNCCount() (uint32, error)
}

// FixedVNC reports a constant count.
type FixedVNC uint32

// TotalVNCCount reports f.
func (f FixedVNC) TotalVNCCount() (uint32, error) { return uint32(f), nil }
