package main

import (
	"io"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/layoutcheck"
)

func init() {
	app.Register(&cli.Command{Name: "show", Summary: "print a struct's DWARF layout pahole-style with the spec's expectation beside each member",
		Synopsis: "STRUCT FILE [--spec NAME|DIR [--base NAME|DIR]] [--debug-dir DIR]... [--c]",
		Example:  "show nec_version_info_t build/libnrt.so.1",
		Exits:    "0 printed and matching the spec (or not described by it; always with --c), 4 compatible differences, 8 incompatible differences, 12 both, 1 error (struct not found, unreadable input), 2 usage error",
		Run:      showCmd})
}

func showCmd(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	var lf layoutFlags
	lf.register(fs)
	asC := fs.Bool("c", false, "print the struct and the types it needs as C that compiles, with _Static_asserts of its size and every member's offset and size")
	var dirs debugDirFlag
	dirs.register(fs)
	pos, rc := c.ParseAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) != 2 {
		return c.Usagef(errw, "want STRUCT FILE, e.g. nrtabi show nec_version_info_t libnrt.so.1")
	}
	if rc := showArgOrder(c, errw, pos); rc >= 0 {
		return rc
	}
	if *asC {
		_, err := layoutcheck.Show(pos[1], pos[0], layoutcheck.ShowOptions{DebugDirs: dirs.get(), C: true}, out)
		if code := layoutError(c, errw, err); code >= 0 {
			return code
		}
		return cli.ExitOK
	}
	_, structs, where, err := lf.load()
	if err != nil {
		return reportSpecError(c, errw, where, err)
	}
	res, err := layoutcheck.Show(pos[1], pos[0], layoutcheck.ShowOptions{Spec: structs, DebugDirs: dirs.get()}, out)
	if code := layoutError(c, errw, err); code >= 0 {
		return code
	}
	exit := 0
	for _, f := range res.Findings {
		exit |= int(f.Severity)
	}
	return exit
}
