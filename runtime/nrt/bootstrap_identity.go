package nrt

import "github.com/nrtabi/nrtabi/generated/abi"

// BootstrapIdentity is what a bootstrap written in Go (runtime/transport/tcp,
// the libnccom side of `nrtabi-runtime bootstrap`) asks of libnrt, answered by this
// runtime instead of constants: nrt_get_total_vnc_count from the device
// layer (the topology's regime decides; distributed is 0) and the two
// version identities getNcclNrtGitHash welds. It satisfies tcp.VNCCounter
// and tcp.Versions.
type BootstrapIdentity struct {
	// NRTGit, when set, replaces libnrt's git hash (a skewed host).
	NRTGit string
}

// TotalVNCCount is nrt_get_total_vnc_count().
func (BootstrapIdentity) TotalVNCCount() (uint32, error) { return Device().ReportedVNCCount(), nil }

// NRTVersion is nrt_get_version().
func (b BootstrapIdentity) NRTVersion() (RuntimeVersion, error) {
	v := Version()
	if b.NRTGit != "" {
		v.GitHash = [len(v.GitHash)]byte{}
		copy(v.GitHash[:len(v.GitHash)-1], b.NRTGit)
	}
	return v, nil
}

// NccomVersion is libnccom's neuronGetVersionInfo: the loaded library's
// answer once Init has loaded one, else the release's (the process calling
// is then the libnccom side itself).
func (BootstrapIdentity) NccomVersion() (VersionInfo, error) {
	if CurrentState().ValidSlots > 0 {
		return GetVersionInfo()
	}
	var vi VersionInfo
	copy(vi.GitHash[:len(vi.GitHash)-1], abi.LibnccomGit)
	vi.CompatibilityVersion = abi.NccomCompatID
	return vi, nil
}
