package nrt

import (
	"strconv"
	"strings"
)

// Version is what nrt_get_version reports: the release this runtime
// implements as rt_major.rt_minor.rt_patch(.rt_maintenance), a description,
// and the shipped libnrt's git hash. libnccom welds the first bytes of that
// hash into nccl_nrt_git_hash, which peers compare, so a process running this
// runtime agrees with one running the shipped library of the same release.
func Version() RuntimeVersion {
	var v RuntimeVersion
	parts := strings.Split(Release, ".")
	for i, p := range parts {
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
	copy(v.RtDetail[:len(v.RtDetail)-1], "nrtabi libnrt, boundary release "+Release)
	copy(v.GitHash[:len(v.GitHash)-1], libnrtGit)
	return v
}
