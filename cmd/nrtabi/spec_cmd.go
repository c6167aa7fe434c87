package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/spec"
)

func specValidateCommand() *cli.Command {
	return &cli.Command{Name: "spec validate", Summary: "validate a release spec; print its counts or every error at file:line:col",
		Synopsis: "[--spec NAME|DIR | NAME|DIR]", Example: "spec validate 2.32.0-synthetic", Run: specValidate}
}

func specShowCommand() *cli.Command {
	return &cli.Command{Name: "spec show", Summary: "print a release spec as text or JSON",
		Synopsis: "[--spec NAME|DIR | NAME|DIR] [--format text|json]", Example: "spec show --spec spec/2.31.24 --format json", Run: specShow}
}

// specArg parses a spec command's flags and its one optional positional
// spec (the same resolver as --spec; giving both is a usage error).
func specArg(c *cli.Command, fs *flag.FlagSet, sf *cli.SpecFlag, args []string, errw io.Writer) int {
	pos, rc := c.ParseAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "spec" })
	switch {
	case len(pos) > 1:
		return c.Usagef(errw, "unexpected argument %q: name one spec", pos[1])
	case len(pos) == 1 && set:
		return c.Usagef(errw, "the spec is named twice (--spec %s and %q): give one", sf.Value, pos[0])
	case len(pos) == 1:
		sf.Value = pos[0]
	}
	return -1
}

func specValidate(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(out, errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the spec to validate")
	if rc := specArg(c, fs, &sf, args, errw); rc >= 0 {
		return rc
	}
	s, where, err := sf.Load()
	if err != nil {
		return reportSpecError(c, errw, where, err)
	}
	fmt.Fprintf(out, "%s: valid\n", where)
	fmt.Fprint(out, cli.SpecSummary(s))
	return cli.ExitOK
}

// reportSpecError prints every error of a failed load and returns
// ExitError; a spec value that names nothing is a usage error.
func reportSpecError(c *cli.Command, errw io.Writer, where string, err error) int {
	var errs spec.Errors
	if errors.As(err, &errs) {
		fmt.Fprintln(errw, errs.Error())
		if len(errs) > 1 { // one error is its own line: it names file:line:col
			fmt.Fprintf(errw, "%s: %d error(s)\n", where, len(errs))
		}
		return cli.ExitError
	}
	var ne *cli.NameError
	if errors.As(err, &ne) {
		return c.Usagef(errw, "%v", err)
	}
	return c.Errorf(errw, "%v", err)
}

func specShow(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(out, errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the spec to show")
	format := fs.String("format", "text", "output format: text or json")
	if rc := specArg(c, fs, &sf, args, errw); rc >= 0 {
		return rc
	}
	if *format != "text" && *format != "json" {
		return c.Usagef(errw, "--format %q: use text or json", *format)
	}
	s, where, err := sf.Load()
	if err != nil {
		return reportSpecError(c, errw, where, err)
	}
	if *format == "json" {
		if err := render.JSON(out, s.View()); err != nil {
			return c.Errorf(errw, "%v", err)
		}
		return cli.ExitOK
	}
	showText(out, s)
	return cli.ExitOK
}

func showText(out io.Writer, s *spec.Spec) {
	fmt.Fprint(out, cli.SpecSummary(s))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "\nFORWARD (dlsym order)\n#\tsymbol\tslot\ttrampoline\tguard\tgroup\tconf\n")
	for _, f := range s.ByIndex() {
		fmt.Fprintf(w, "%d\t%s\t%#x\t%s\t%s\t%s\t%s\n", f.Index, f.Name, f.Slot, f.Trampoline, f.Guard, f.Group, f.ConfOf("index"))
	}
	fmt.Fprintf(w, "\nREVERSE\nsymbol\tversion\taddr\tshape\tgroup\n")
	for _, r := range s.Reverse {
		fmt.Fprintf(w, "%s\t%s\t%#x\t%s\t%s\n", r.Name, r.Version, r.Addr, r.Shape, r.Group)
	}
	fmt.Fprintf(w, "\nSTRUCTS\nname\tsize\talign\tfields\topaque\tside\n")
	for _, st := range s.Structs {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\n", st.Name, st.Size, st.Align(), len(st.Fields), len(st.Opaque), st.Side)
	}
	w.Flush()
}
