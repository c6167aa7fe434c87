package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/spec"
)

// `nrtabi gen` is the generator's one command line: `make generate`,
// `make check-generated` and `go generate ./gen` all run it (built with
// -tags nrtabi_nocompiled, so that a stale spec/zcompiled.go never stands
// in the way of regenerating it).
func init() {
	app.Register(&cli.Command{Name: "gen", Summary: "generate C, linker scripts and Go bindings for a release, or the whole generated tree",
		Synopsis: "(--spec NAME|DIR --out DIR | --all [--out DIR] [--root DIR]) [--check]",
		Example:  "gen --all --check",
		Run:      genCmd})
}

func genCmd(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	var sf cli.SpecFlag
	sf.Register(fs, "spec", "", "the one spec to generate (with --out)")
	all := fs.Bool("all", false, "generate every embedded release and the release selector; without --out, the whole tree under the module root: "+
		gen.GeneratedDir+"/, "+gen.CompiledDir+"/"+gen.CompiledSpecName+" and the zrelease files of "+strings.Join(gen.CgoPackages, ", "))
	dest := fs.String("out", "", "output directory (with --all: the releases and the selector only)")
	root := fs.String("root", "", "with --all and no --out: the module root (default: found above the working directory)")
	check := fs.Bool("check", false, "write nothing; exit 1 listing every file that generating would change")
	if rc := c.Parse(fs, args, errw); rc >= 0 {
		return rc
	}
	switch {
	case *all && sf.Value != "":
		return c.Usagef(errw, "--all generates the embedded releases; drop --spec")
	case !*all && sf.Value == "":
		return c.Usagef(errw, "name the spec (--spec NAME|DIR) or give --all")
	case !*all && *dest == "":
		return c.Usagef(errw, "--out is required with --spec")
	case *root != "" && (!*all || *dest != ""):
		return c.Usagef(errw, "--root names the tree --all writes without --out")
	}
	log := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// Generate everything before writing anything: a bad release leaves
	// every output directory as it was.
	type result struct {
		dir   string
		files []gen.File
	}
	var results []result
	var specs []*spec.Spec
	names := []string{sf.Value}
	tree := *all && *dest == ""
	if *all {
		names = spec.Releases()
		if tree {
			if *root == "" {
				wd, err := os.Getwd()
				if err != nil {
					return c.Errorf(errw, "%v", err)
				}
				if *root, err = gen.FindRoot(wd); err != nil {
					return c.Usagef(errw, "%v; or give --root DIR or --out DIR", err)
				}
			}
			*dest = filepath.Join(*root, gen.GeneratedDir)
		}
	}
	for _, n := range names {
		s, where, err := cli.ResolveTOML(n) // never a (possibly stale) compiled form
		if err != nil {
			if rc := reportSpecError(c, errw, where, err); rc == cli.ExitUsage {
				return rc
			}
			return c.Errorf(errw, "%s is not a valid spec", where)
		}
		files, err := gen.Generate(s)
		if err != nil {
			return c.Errorf(errw, "%v", err)
		}
		specs = append(specs, s)
		dir := *dest
		if *all {
			dir = filepath.Join(*dest, s.Release.Name)
		}
		results = append(results, result{dir, files})
	}
	if *all {
		sel, err := gen.Selector(specs, spec.Default)
		if err != nil {
			return c.Errorf(errw, "%v", err)
		}
		results = append(results, result{*dest, sel})
	}
	if tree {
		files, err := gen.CompiledSpec(specs)
		if err != nil {
			return c.Errorf(errw, "%v", err)
		}
		results = append(results, result{filepath.Join(*root, gen.CompiledDir), files})
		for _, pkg := range gen.CgoPackages {
			dir := filepath.Join(*root, filepath.FromSlash(pkg))
			name, err := packageName(dir)
			if err != nil {
				return c.Errorf(errw, "cgo package %s: %v", pkg, err)
			}
			results = append(results, result{dir, gen.CgoRelease(specs, spec.Default, pkg, name)})
		}
	}
	if *check {
		var bad []string
		for _, r := range results {
			bad = append(bad, gen.Check(r.dir, r.files)...)
		}
		for _, b := range bad {
			fmt.Fprintln(errw, b)
		}
		if len(bad) > 0 {
			return c.Errorf(errw, "%d generated file(s) out of date: run 'make generate' and commit the result", len(bad))
		}
		fmt.Fprintln(out, "generated files are up to date")
		return cli.ExitOK
	}
	for _, r := range results {
		if err := gen.Write(r.dir, r.files); err != nil {
			return c.Errorf(errw, "%v", err)
		}
		log.Info("generated", "dir", r.dir, "files", len(r.files))
		fmt.Fprintf(out, "%s: %d files\n", r.dir, len(r.files))
	}
	return cli.ExitOK
}

// packageName reads the package clause of the hand-written Go files in dir.
func packageName(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") || strings.HasPrefix(e.Name(), "zrelease_") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return f.Name.Name, nil
	}
	return "", fmt.Errorf("no Go files")
}
