package main

import (
	"context"
	"fmt"
	"io"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck"
)

func init() {
	app.Register(&cli.Command{Name: "show", Summary: "print a struct's DWARF layout pahole-style with the spec's expectation beside each member",
		Synopsis: "STRUCT FILE | --headers DIR [--include FILE]... [-I DIR]... STRUCT [--spec NAME|DIR [--base NAME|DIR]] [--debug-dir DIR]... [--c]",
		Example:  "show nec_version_info_t build/libnrt.so.1",
		Exits:    "0 printed and matching the spec (or not described by it; always with --c), 4 compatible differences, 8 incompatible differences, 12 both, 1 error (struct not found, unreadable input), 2 usage error",
		Run:      showCmd})
}

func showCmd(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	var lf layoutFlags
	lf.register(fs)
	asC := fs.Bool("c", false, "print the struct and the types it needs as C that compiles, with _Static_asserts of its size and every member's offset and size")
	headers := fs.String("headers", "", "read the struct from the C headers under this directory (compiled with gcc -g in a temporary directory, as check --headers does) instead of a FILE")
	var include, incdirs cli.ListFlag
	fs.Var(&include, "include", "with --headers: a header to read, relative to DIR (repeatable, or a comma list); default every *.h")
	fs.Var(&incdirs, "I", "with --headers: a directory of headers the tree includes and does not ship (repeatable, or a comma list)")
	var dirs debugDirFlag
	dirs.register(fs)
	pos, rc := c.ParseAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	if (len(include) > 0 || len(incdirs) > 0) && *headers == "" {
		return c.Usagef(errw, "--include and -I name headers under --headers DIR; give --headers too")
	}
	if *headers != "" {
		if len(pos) != 1 {
			return c.Usagef(errw, "with --headers DIR, want one STRUCT, e.g. nrtabi show --headers /opt/aws/neuron/include nec_version_info_t")
		}
	} else {
		if len(pos) != 2 {
			return c.Usagef(errw, "want STRUCT FILE, e.g. nrtabi show nec_version_info_t libnrt.so.1")
		}
		if rc := showArgOrder(c, errw, pos); rc >= 0 {
			return rc
		}
	}
	_, structs, where, err := lf.load()
	if err != nil {
		return reportSpecError(c, errw, where, err)
	}
	name, file := pos[0], ""
	if *headers != "" {
		// The same header machinery as check --headers: the spec's structs
		// decide which headers must compile (docs/layoutcheck.md#headers-as-input).
		h, err := layoutcheck.CompileHeadersContext(context.Background(), *headers,
			layoutcheck.HeaderOptions{Include: include, IncludeDirs: incdirs, Spec: structs})
		if code := layoutError(c, errw, err); code >= 0 {
			return code
		}
		defer h.Close()
		for _, w := range h.Warnings {
			fmt.Fprintf(errw, "%s: warning: %s\n", c.FullName(), esc.String(w))
		}
		file = h.Object
	} else {
		file = pos[1]
	}
	if *asC {
		_, err := layoutcheck.Show(file, name, layoutcheck.ShowOptions{DebugDirs: dirs.get(), C: true}, out)
		if code := layoutError(c, errw, err); code >= 0 {
			return code
		}
		return cli.ExitOK
	}
	res, err := layoutcheck.Show(file, name, layoutcheck.ShowOptions{Spec: structs, DebugDirs: dirs.get()}, out)
	if code := layoutError(c, errw, err); code >= 0 {
		return code
	}
	exit := 0
	for _, f := range res.Findings {
		exit |= int(f.Severity)
	}
	return exit
}
