package nrt

import (
	"strconv"
	"strings"
)

// Unknown is what nrt_get_version writes for a version or git hash the
// release's spec does not state (docs/runtime-boundary.md#release-identity).
const Unknown = "unknown"

// Version is what nrt_get_version reports: the runtime version the release's
// spec states ([release] runtime_version, rule release-version) as
// rt_major.rt_minor.rt_patch(.rt_maintenance), a description naming the
// release, and the shipped libnrt's git hash ([release.libnrt] git). A spec
// without a runtime version reports zeros and says "runtime version unknown"
// in rt_detail; one without a git hash reports "unknown". Nothing is read off
// the release's name: a release named sdk2.28.0 is not runtime 0.28.0.
// libnccom welds the first bytes of the hash into nccl_nrt_git_hash, which
// peers compare, so a process running this runtime agrees with one running
// the shipped library of the same release.
func Version() RuntimeVersion {
	return version(Release, libnrtRuntimeVersion, libnrtGit)
}

func version(release, runtime, git string) RuntimeVersion {
	var v RuntimeVersion
	detail := "nrtabi libnrt for release " + release + ", runtime version "
	if runtime == "" {
		detail += Unknown
	} else {
		detail += runtime
		// The spec's loader held runtime_version to the grammar (major.minor.patch[.maintenance], decimal parts).
		for i, p := range strings.Split(runtime, ".") {
			n, _ := strconv.ParseUint(p, 10, 64)
			switch i {
			case 0:
				v.RtMajor = n
			case 1:
				v.RtMinor = n
			case 2:
				v.RtPatch = n
			case 3:
				v.RtMaintenance = n
			}
		}
	}
	if git == "" {
		git = Unknown
	}
	copy(v.RtDetail[:len(v.RtDetail)-1], detail)
	copy(v.GitHash[:len(v.GitHash)-1], git)
	return v
}
