package tcp

import (
	"bytes"
	"fmt"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// Versions is where getNcclNrtGitHash reads the two build identities:
// libnccom's own version info (neuronGetVersionInfo) and libnrt's
// (nrt_get_version). The real libnrt answers NRTVersion once it is wired.
type Versions interface {
	NccomVersion() (abi.NECVersionInfo, error)
	NRTVersion() (abi.NRTVersion, error)
}

// SpecVersions answers with the release's git hashes from the spec
// (abi.LibnccomGit, abi.LibnrtGit); a non-empty field replaces one.
type SpecVersions struct {
	NccomGit, NRTGit string
}

// NccomVersion is libnccom's version info with its git hash.
func (v SpecVersions) NccomVersion() (abi.NECVersionInfo, error) {
	var vi abi.NECVersionInfo
	copy(vi.GitHash[:], pick(v.NccomGit, abi.LibnccomGit))
	vi.CompatibilityVersion = abi.NccomCompatID
	return vi, nil
}

// NRTVersion is libnrt's nrt_version_t with its git hash.
func (v SpecVersions) NRTVersion() (abi.NRTVersion, error) {
	var vi abi.NRTVersion
	copy(vi.GitHash[:], pick(v.NRTGit, ReleaseNRTGit()))
	return vi, nil
}

// unknownGit is what nrt_get_version reports as the git hash of a release
// whose spec does not state libnrt's own (runtime/nrt.Unknown,
// docs/runtime-boundary.md#release-identity); the Go side welds the same
// bytes so a mixed Go/C world of such a release agrees.
const unknownGit = "unknown"

// ReleaseNRTGit is the libnrt git hash a runtime built for this release
// reports through nrt_get_version: the spec's own, or "unknown".
func ReleaseNRTGit() string { return pick(abi.LibnrtGit, unknownGit) }

func pick(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// GitHash is getNcclNrtGitHash: the first 8 bytes of libnccom's version-info
// git hash, then the first 8 bytes of libnrt's nrt_version_t.git_hash.
func GitHash(v Versions) (abi.NcclNRTGitHash, error) {
	var h abi.NcclNRTGitHash
	nccom, err := v.NccomVersion()
	if err != nil {
		return h, fmt.Errorf("getNcclNrtGitHash: libnccom version info: %w", err)
	}
	nrt, err := v.NRTVersion()
	if err != nil {
		return h, fmt.Errorf("getNcclNrtGitHash: nrt_get_version: %w", err)
	}
	copy(h.Nccom[:], nccom.GitHash[:len(h.Nccom)])
	copy(h.NRT[:], nrt.GitHash[:len(h.NRT)])
	return h, nil
}

// formatGitHash shows a tag as its two halves. The bytes are the peer's,
// so they are escaped (cfmt.Escape), not merely quoted.
func formatGitHash(h abi.NcclNRTGitHash) string {
	half := func(b []byte) string { return `"` + cfmt.Escape(bytes.TrimRight(b, "\x00"), len(b)) + `"` }
	return "libnccom " + half(h.Nccom[:]) + " + libnrt " + half(h.NRT[:])
}
