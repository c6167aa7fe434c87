package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/readers/inputs"
)

// compatRoles are the file names a directory or package argument of compat
// is searched for, by position: libnrt, libnccom, the plugin.
var compatRoles = []struct{ what, prefix string }{
	{"libnrt", "libnrt.so"},
	{"libnccom", "libnccom.so"},
	{"the net plugin", "libnccom-net.so"},
}

// compatInputs reads compat's arguments as check reads its own: a file, a
// directory, or a package (.deb, .rpm, archive) taken apart in memory; the
// --with packages (debug packages) are expanded in the same run, so their
// debug files answer every side's lookup (docs/packages.md#debug-packages).
// An argument that holds more than one ELF file must hold exactly one of
// its position's name.
func compatInputs(args, with []string) ([]compat.Named, error) {
	all, err := expandPackages(append(append([]string(nil), args...), with...), inputs.Options{NonELF: inputs.NonELFSkip})
	if err != nil {
		return nil, err
	}
	out := make([]compat.Named, len(args))
	for i, arg := range args {
		var mine []inputs.Input
		for _, in := range all {
			if in.Skip == "" && (in.Name == arg || strings.HasPrefix(in.Name, arg+"!") || strings.HasPrefix(in.Name, strings.TrimSuffix(arg, "/")+"/")) {
				mine = append(mine, in)
			}
		}
		if len(mine) == 1 && mine[0].Name == arg {
			out[i] = compat.Named{Name: arg, In: mine[0]}
			continue
		}
		role := compatRoles[i]
		var named []inputs.Input
		for _, in := range mine {
			base := path.Base(strings.ReplaceAll(in.Name, "!", "/"))
			if strings.HasPrefix(base, role.prefix) {
				named = append(named, in)
			}
		}
		switch len(named) {
		case 1:
			out[i] = compat.Named{Name: named[0].Name, In: named[0]}
		case 0:
			return nil, fmt.Errorf("%s: holds no %s* file for %s (%d ELF files read); name the file", arg, role.prefix, role.what, len(mine))
		default:
			var names []string
			for _, in := range named {
				names = append(names, in.Name)
			}
			return nil, fmt.Errorf("%s: holds %d %s* files (%s); name the one for %s", arg, len(named), role.prefix, strings.Join(names, ", "), role.what)
		}
	}
	return out, nil
}
