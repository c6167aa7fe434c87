package tcp

// VNCCounter is libnrt's nrt_get_total_vnc_count as the bootstrap sees it:
// non-zero is the single-vNC regime, where there is no peer to reach and the
// bootstrap does nothing (docs/sources.md#s001-3-gotcha). The count is the
// query's out-value, not its return (contradiction
// total-vnc-count-signature); an error is a failed query, never a count. A
// rank the launcher starts asks the runtime's device layer
// (nrt.BootstrapIdentity, runtime/launch); FixedVNC(0), the Config default,
// stands in for a caller that names none.
type VNCCounter interface {
	TotalVNCCount() (uint32, error)
}

// FixedVNC reports a constant count.
type FixedVNC uint32

// TotalVNCCount reports f.
func (f FixedVNC) TotalVNCCount() (uint32, error) { return uint32(f), nil }
