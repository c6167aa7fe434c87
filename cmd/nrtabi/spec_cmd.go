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
func specArg(c *cli.Command, fs *flag.FlagSet, sf *cli.SpecFlag, args []string) error {
	pos, err := c.ParseAnywhere(fs, args)
	if err != nil {
		return err
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "spec" })
	switch {
	case len(pos) > 1:
		return c.Usagef("unexpected argument %q: name one spec", pos[1])
	case len(pos) == 1 && set:
		return c.Usagef("the spec is named twice (--spec %s and %q): give one", sf.Value, pos[0])
	case len(pos) == 1:
		sf.Value = pos[0]
	}
	return nil
}

func specValidate(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the spec to validate")
	if err := specArg(c, fs, &sf, args); err != nil {
		return err
	}
	s, where, err := sf.Load()
	if err != nil {
		return specError(c, where, err)
	}
	fmt.Fprintf(out, "%s: valid\n", where)
	fmt.Fprint(out, cli.SpecSummary(s))
	return nil
}

// specError is the error of a failed load: every error of the spec at
// its file:line:col (and their count), exit 1; a spec value that names
// nothing is a usage error.
func specError(c *cli.Command, where string, err error) error {
	var errs spec.Errors
	if errors.As(err, &errs) {
		lines := []string{errs.Error()}
		if len(errs) > 1 { // one error is its own line: it names file:line:col
			lines = append(lines, fmt.Sprintf("%s: %d error(s)", where, len(errs)))
		}
		return cli.Lines(cli.ExitError, err, lines...)
	}
	var ne *cli.NameError
	if errors.As(err, &ne) {
		return c.Usagef("%v", err)
	}
	return err
}

func specShow(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", spec.Default, "the spec to show")
	format := fs.String("format", "text", "output format: text or json")
	if err := specArg(c, fs, &sf, args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return c.Usagef("--format %q: use text or json", *format)
	}
	s, where, err := sf.Load()
	if err != nil {
		return specError(c, where, err)
	}
	if *format == "json" {
		if err := render.JSON(out, s.View()); err != nil {
			return err
		}
		return nil
	}
	showText(out, s)
	return nil
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
