package main

import (
	"fmt"
	"io"

	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	register(&command{name: "show", summary: "print a struct's DWARF layout pahole-style with the spec's expectation beside each member", run: showCmd})
}

func showCmd(args []string, out, errw io.Writer) int {
	fs := newFlags("show", errw)
	fs.Usage = func() {
		fmt.Fprintln(errw, "usage: nrtabi show STRUCT FILE [--release R | --spec DIR] [--debug-dir DIR]... [--c]")
		fs.PrintDefaults()
	}
	release := fs.String("release", spec.Default, "embedded release whose struct to compare with")
	dir := fs.String("spec", "", "read the spec from this directory (a full release or a struct fragment)")
	asC := fs.Bool("c", false, "print the struct and the types it needs as C that compiles, with _Static_asserts of its size and every member's offset and size")
	var dirs listFlag
	fs.Var(&dirs, "debug-dir", "directory of separate debug files (repeatable; default /usr/lib/debug)")
	pos, rc := parseFlagsAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) != 2 {
		fmt.Fprintln(errw, "nrtabi show: want STRUCT FILE, e.g. nrtabi show nec_version_info_t libnrt.so.1")
		return exitUsage
	}
	if *asC {
		if code := layoutError(errw, "show", layoutcheck.ShowC(pos[1], pos[0], debugDirs(dirs), out)); code >= 0 {
			return code
		}
		return exitOK
	}
	_, structs, where, err := layoutSpecs(*release, *dir)
	if err != nil {
		return reportSpecError(errw, where, err)
	}
	res, err := layoutcheck.Show(pos[1], pos[0], structs, debugDirs(dirs), out)
	if code := layoutError(errw, "show", err); code >= 0 {
		return code
	}
	exit := 0
	for _, f := range res.Findings {
		exit |= int(f.Severity)
	}
	return exit
}
