// Package cli is the command line of the generator, shared by `nrtabi gen`
// and the standalone gen/cmd/nrtabi-gen that `make generate` runs. The
// standalone binary imports nothing that compiles generated code, so it can
// always regenerate it.
package cli

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/spec"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// Run runs the generator with command-line args.
func Run(args []string, out, errw io.Writer) int {
	fs := flag.NewFlagSet("nrtabi gen", flag.ContinueOnError)
	fs.SetOutput(errw)
	release := fs.String("release", spec.Default, "embedded release to use")
	specDir := fs.String("dir", "", "read the spec from this directory instead of the embedded one")
	all := fs.Bool("all", false, "generate every embedded release into OUT/<release>, and the release selector OUT/abi")
	dest := fs.String("out", "", "output directory (with --all: the generated root)")
	check := fs.Bool("check", false, "write nothing; exit 1 listing every file that generating would change")
	compiled := fs.String("compiled", "", "with --all: the spec package directory to write "+gen.CompiledSpecName+" into (the embedded releases as Go literals)")
	var cgo listFlag
	fs.Var(&cgo, "cgo", "a cgo package directory (repeatable) to give one zrelease_<release>.go per release, pointing its C include path at that release")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if *dest == "" && !(len(cgo) > 0 && *all) {
		fmt.Fprintln(errw, "nrtabi gen: --out is required")
		return exitUsage
	}
	if *all && *specDir != "" {
		fmt.Fprintln(errw, "nrtabi gen: --all generates the embedded releases; drop --dir")
		return exitUsage
	}
	if *compiled != "" && !*all {
		fmt.Fprintln(errw, "nrtabi gen: --compiled needs --all (the file holds every release)")
		return exitUsage
	}
	if len(cgo) > 0 && !*all {
		fmt.Fprintln(errw, "nrtabi gen: --cgo needs --all (its files cover every release)")
		return exitUsage
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
	type load struct{ release, dir string }
	loads := []load{{*release, *specDir}}
	if *all {
		loads = nil
		for _, r := range spec.Releases() {
			loads = append(loads, load{release: r})
		}
	}
	for _, l := range loads {
		var s *spec.Spec
		var err error
		where := l.dir
		if l.dir != "" {
			s, err = spec.LoadDir(l.dir)
		} else {
			where = "spec/" + l.release
			s, err = spec.LoadTOML(l.release) // never a (possibly stale) compiled form
		}
		if err != nil {
			fmt.Fprintln(errw, err)
			fmt.Fprintf(errw, "nrtabi gen: %s is not a valid spec\n", where)
			return exitError
		}
		files, err := gen.Generate(s)
		if err != nil {
			fmt.Fprintf(errw, "nrtabi gen: %v\n", err)
			return exitError
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
			fmt.Fprintf(errw, "nrtabi gen: %v\n", err)
			return exitError
		}
		results = append(results, result{*dest, sel})
		if *compiled != "" {
			files, err := gen.CompiledSpec(specs)
			if err != nil {
				fmt.Fprintf(errw, "nrtabi gen: %v\n", err)
				return exitError
			}
			results = append(results, result{*compiled, files})
		}
		for _, dir := range cgo {
			name, err := packageName(dir)
			if err != nil {
				fmt.Fprintf(errw, "nrtabi gen: --cgo %s: %v\n", dir, err)
				return exitError
			}
			results = append(results, result{dir, gen.CgoRelease(specs, spec.Default, dir, name)})
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
			fmt.Fprintf(errw, "nrtabi gen: %d generated file(s) out of date: run 'make generate' and commit the result\n", len(bad))
			return exitError
		}
		fmt.Fprintln(out, "generated files are up to date")
		return exitOK
	}
	for _, r := range results {
		if err := gen.Write(r.dir, r.files); err != nil {
			fmt.Fprintf(errw, "nrtabi gen: %v\n", err)
			return exitError
		}
		log.Info("generated", "dir", r.dir, "files", len(r.files))
		fmt.Fprintf(out, "%s: %d files\n", r.dir, len(r.files))
	}
	return exitOK
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
