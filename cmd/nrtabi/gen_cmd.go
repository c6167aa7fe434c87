package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/spec"
)

// `nrtabi gen` is the generator's one command line: `make generate`,
// `make check-generated` and `go generate ./...` all run `nrtabi gen --all`.
// It reads every spec from its TOML (cli.ResolveTOML), never from
// spec/compiled, whose zcompiled.go it writes. What the tree holds is
// gen.Tree's to say.
func genCommand() *cli.Command {
	return &cli.Command{Name: "gen", Summary: "generate C, linker scripts and Go bindings for a release, or the whole generated tree",
		Synopsis: "(--spec NAME|DIR --out DIR | --all [--out DIR] [--root DIR]) [--check]",
		Example:  "gen --all --check",
		Run:      genCmd}
}

func genCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", "", "the one spec to generate (with --out)")
	all := fs.Bool("all", false, "generate every embedded release and the release selector; without --out, the whole tree under the module root: "+gen.TreeSummary())
	dest := fs.String("out", "", "output directory (with --all: the releases and the selector only)")
	root := fs.String("root", "", "with --all and no --out: the module root (default: found above the working directory)")
	check := fs.Bool("check", false, "write nothing; exit 1 listing every file that generating would change")
	if err := c.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *all && sf.Value != "":
		return c.Usagef("--all generates the embedded releases; drop --spec")
	case !*all && sf.Value == "":
		return c.Usagef("name the spec (--spec NAME|DIR) or give --all")
	case !*all && *dest == "":
		return c.Usagef("--out is required with --spec")
	case *root != "" && (!*all || *dest != ""):
		return c.Usagef("--root names the tree --all writes without --out")
	}
	// Generate everything before writing anything: a bad release leaves
	// every output directory as it was.
	names := []string{sf.Value}
	tree := *all && *dest == ""
	if *all {
		names = spec.Releases()
		if tree && *root == "" {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			if *root, err = gen.FindRoot(wd); err != nil {
				return c.Usagef("%v; or give --root DIR or --out DIR", err)
			}
		}
	}
	var specs []*spec.Spec
	for _, n := range names {
		s, where, err := cli.ResolveTOML(n) // never a (possibly stale) compiled form
		if err != nil {
			// The errors, one line each (a count when several), and no
			// line more: the spec's own lines say what is wrong where.
			return specError(c, where, err)
		}
		specs = append(specs, s)
	}
	var results []gen.Output
	var err error
	switch {
	case tree:
		results, err = gen.Tree(*root, specs, spec.Default)
	case *all:
		results, err = gen.Releases(*dest, specs, spec.Default)
	default:
		var files []gen.File
		files, err = gen.Generate(specs[0])
		results = []gen.Output{{Dir: *dest, Files: files}}
	}
	if r := (*gen.Refusal)(nil); errors.As(err, &r) {
		// One line per reason, each escaped on its own: joined, the
		// escaping would fold them into one line of literal \n.
		e := &cli.Error{Code: cli.ExitError, Msg: fmt.Sprintf("%d reason(s) above refuse generation (docs/generator.md#stable-fields, #absent-fields)", len(r.Lines))}
		for _, l := range r.Lines {
			e.Lines = append(e.Lines, esc.String(l))
		}
		return e
	}
	if err != nil {
		return err
	}
	if *check {
		var bad []string
		for _, r := range results {
			bad = append(bad, gen.Check(r.Dir, r.Files)...)
		}
		if len(bad) > 0 {
			return &cli.Error{Code: cli.ExitError, Lines: bad, Msg: fmt.Sprintf("%d generated file(s) out of date: run 'make generate' and commit the result", len(bad))}
		}
		fmt.Fprintln(out, "generated files are up to date")
		return nil
	}
	for _, r := range results {
		if err := gen.Write(r.Dir, r.Files); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d files\n", r.Dir, len(r.Files))
	}
	return nil
}
