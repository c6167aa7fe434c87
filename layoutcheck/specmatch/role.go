package specmatch

import (
	"strings"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// Roles an input can play.
const (
	RoleLibnrt   = "libnrt"
	RoleLibnccom = "libnccom"
	// RoleLibnccomNet is the net plugin libnrt soft-loads and libnccom
	// takes its tables from (spec release.toml [release.libnccom_net]).
	RoleLibnccomNet = "libnccom-net"
	RoleNone        = "none" // structs only
)

// DetectRole derives the role from the SONAME.
func DetectRole(o *elfread.File, sp *spec.Spec) (role, from string) {
	switch {
	case o.SONAME == "":
		return RoleNone, "no SONAME"
	case o.SONAME == sp.Release.LibNRT.SONAME:
		return RoleLibnrt, "SONAME " + o.SONAME
	case o.SONAME == sp.Release.LibNCCOM.SONAME || strings.HasPrefix(o.SONAME, "libnccom.so"):
		return RoleLibnccom, "SONAME " + o.SONAME
	case sp.Release.LibNCCOMNet.File != "" && o.SONAME == sp.Release.LibNCCOMNet.File:
		return RoleLibnccomNet, "SONAME " + o.SONAME
	}
	return RoleNone, "SONAME " + o.SONAME + " is none of libnrt's, libnccom's or the net plugin's"
}
