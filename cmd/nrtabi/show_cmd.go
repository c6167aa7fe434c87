package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck"
)

func showCommand() *cli.Command {
	return &cli.Command{Name: "show", Summary: "print a struct's DWARF layout pahole-style with the spec's expectation beside each member",
		Synopsis: "STRUCT FILE|DIR... | --headers DIR [--include FILE]... [-I DIR]... [--cflags FLAGS] STRUCT [--spec NAME|DIR [--base NAME|DIR]] [--debug-dir DIR]... [--c] [-j N] [--non-elf skip|fail]",
		Example:  "show nec_version_info_t build/libnrt.so.1",
		Exits:    "0 printed and matching the spec (or not described by it; always with --c), 4 compatible differences, 8 incompatible differences, 12 both (over many inputs, the bits of all), 1 error (struct not found, in no input of many, unreadable input), 2 usage error",
		Run:      showCmd}
}

func showCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var lf layoutFlags
	lf.register(fs)
	asC := fs.Bool("c", false, "print the struct and the types it needs as C that compiles, with _Static_asserts of its size and every member's offset and size")
	headers := fs.String("headers", "", "read the struct from the C headers under this directory (compiled with gcc -g in a temporary directory, as check --headers does) instead of a FILE")
	var cf compileFlags
	cf.register(fs, "with --headers")
	var dirs debugDirFlag
	dirs.register(fs)
	var many manyFlags
	many.register(fs)
	pos, err := c.ParseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if err := many.check(); err != nil {
		return c.Usagef("%v", err)
	}
	if cf.given() && *headers == "" {
		return c.Usagef("--include, -I and --cflags are how the headers under --headers DIR are compiled; give --headers too")
	}
	if *headers != "" {
		if len(pos) != 1 {
			return c.Usagef("with --headers DIR, want one STRUCT, e.g. nrtabi show --headers /opt/aws/neuron/include nec_version_info_t")
		}
	} else {
		if len(pos) < 2 {
			return c.Usagef("want STRUCT FILE (or STRUCT FILE|DIR...), e.g. nrtabi show nec_version_info_t libnrt.so.1")
		}
		if err := showArgOrder(c, pos); err != nil {
			return err
		}
		if len(pos) > 2 || isDir(pos[1]) || isPackage(pos[1]) {
			if *asC {
				return c.Usagef("--c prints one struct of one FILE as C that compiles; name one ELF FILE (not %d inputs, a directory or a package)", len(pos)-1)
			}
			_, structs, where, err := lf.load()
			if err != nil {
				return specError(c, where, err)
			}
			return showMany(ctx, c, pos[0], pos[1:], &many, layoutcheck.ShowOptions{Spec: structs, DebugDirs: dirs.get(), Fetch: cli.Debuginfod()}, out)
		}
	}
	_, structs, where, err := lf.load()
	if err != nil {
		return specError(c, where, err)
	}
	name, file := pos[0], ""
	if *headers != "" {
		// The same header machinery as check --headers: the spec's structs
		// decide which headers must compile (docs/layoutcheck.md#headers-as-input).
		h, err := layoutcheck.CompileHeadersContext(ctx, *headers,
			cf.options(structs))
		if err != nil {
			return layoutError(err)
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
		_, err := layoutcheck.Show(ctx, file, name, layoutcheck.ShowOptions{DebugDirs: dirs.get(), Fetch: cli.Debuginfod(), C: true}, out)
		if err != nil {
			return layoutError(err)
		}
		return nil
	}
	res, err := layoutcheck.Show(ctx, file, name, layoutcheck.ShowOptions{Spec: structs, DebugDirs: dirs.get(), Fetch: cli.Debuginfod()}, out)
	if err != nil {
		return layoutError(err)
	}
	exit := 0
	for _, f := range res.Findings {
		exit |= int(f.Severity)
	}
	return cli.Exit(exit)
}

// showMany is show over many inputs (docs/nrtabi-show.md#many-inputs): each
// input's layout under its name, in input order whatever -j; the inputs
// whose DWARF lacks the struct are named in their place; the status is the
// bits of all, or 1 when no input has the struct.
func showMany(ctx context.Context, c *cli.Command, name string, args []string, many *manyFlags, opt layoutcheck.ShowOptions, out io.Writer) error {
	ins, err := many.expand(args)
	if err != nil {
		return err
	}
	outs, err := layoutcheck.ShowMany(ctx, ins, name, opt, many.jobs)
	if err != nil {
		return layoutError(err)
	}
	exit, found, read := 0, 0, 0
	var skipped []string
	for _, o := range outs {
		switch {
		case o.Input.Skip != "":
			skipped = append(skipped, esc.String(o.Input.Name+": "+o.Input.Skip))
			continue
		case o.NotFound != nil:
			fmt.Fprintf(out, "== %s: %s\n\n", esc.String(o.Input.Name), esc.String(strings.TrimPrefix(o.NotFound.Error(), o.Input.Name+": ")))
		default:
			fmt.Fprintf(out, "== %s\n", esc.String(o.Input.Name))
			out.Write(o.Output)
			fmt.Fprintln(out)
			found++
			for _, f := range o.Result.Findings {
				exit |= int(f.Severity)
			}
		}
		read++
	}
	if len(skipped) > 0 {
		fmt.Fprintf(out, "not read (%d)\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintf(out, "    %s\n", s)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "%s: found in %d of %d inputs read\n", esc.String(name), found, read)
	if found == 0 {
		return c.Errorf("no struct %s in any of the %d inputs read from %s", name, read, strings.Join(args, ", "))
	}
	return cli.Exit(exit)
}

// isDir says whether path names a directory (following a link).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
