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
	all, err := expandCompat(args, with)
	if err != nil {
		return nil, err
	}
	out := make([]compat.Named, len(args))
	for i, arg := range args {
		if out[i], err = pickRole(all, arg, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compatSets reads the arguments of compat --matrix DIR|PKG...: each one
// set holding a libnrt and a libnccom. Every argument and debug package is
// expanded once for the whole matrix.
func compatSets(args, with []string) ([]compat.Pairing, error) {
	all, err := expandCompat(args, with)
	if err != nil {
		return nil, err
	}
	out := make([]compat.Pairing, len(args))
	for i, arg := range args {
		out[i].Name = arg
		if out[i].Libnrt, err = pickRole(all, arg, 0); err != nil {
			return nil, err
		}
		if out[i].Libnccom, err = pickRole(all, arg, 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// expandCompat takes the arguments and the --with packages apart in one
// run, so the debug packages' files answer every side's lookup.
func expandCompat(args, with []string) ([]inputs.Input, error) {
	return expandPackages(append(append([]string(nil), args...), with...), inputs.Options{NonELF: inputs.NonELFSkip})
}

// pickRole is the file of arg that plays compatRoles[role]: arg itself
// when it is one file, else the one file under it with the role's name.
func pickRole(all []inputs.Input, arg string, role int) (compat.Named, error) {
	var mine []inputs.Input
	for _, in := range all {
		if in.Skip == "" && (in.Name == arg || strings.HasPrefix(in.Name, arg+"!") || strings.HasPrefix(in.Name, strings.TrimSuffix(arg, "/")+"/")) {
			mine = append(mine, in)
		}
	}
	if len(mine) == 1 && mine[0].Name == arg {
		return compat.Named{Name: arg, In: mine[0]}, nil
	}
	r := compatRoles[role]
	var named []inputs.Input
	for _, in := range mine {
		base := path.Base(strings.ReplaceAll(in.Name, "!", "/"))
		if strings.HasPrefix(base, r.prefix) {
			named = append(named, in)
		}
	}
	switch len(named) {
	case 1:
		return compat.Named{Name: named[0].Name, In: named[0]}, nil
	case 0:
		return compat.Named{}, fmt.Errorf("%s: holds no %s* file for %s (%d ELF files read); name the file", arg, r.prefix, r.what, len(mine))
	default:
		var names []string
		for _, in := range named {
			names = append(names, in.Name)
		}
		return compat.Named{}, fmt.Errorf("%s: holds %d %s* files (%s); name the one for %s", arg, len(named), r.prefix, strings.Join(names, ", "), r.what)
	}
}
