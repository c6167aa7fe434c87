package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/internal/render/html"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

func compatCommand() *cli.Command {
	return &cli.Command{Name: "compat", Summary: "predict, from the binaries alone, whether a libnrt, a libnccom and a net plugin load together",
		Synopsis: "[--spec NAME|DIR]... [--release NAME] [--format text|json|junit|sarif [--source-root DIR]] [--debug-dir DIR]... [--with PKG]... LIBNRT LIBNCCOM [PLUGIN] | --matrix [--spec NAME|DIR]... [--with PKG]... [--format text|json|html -o DIR] [DIR|PKG DIR|PKG...]",
		Example:  "compat build/libnrt.so.1 /opt/aws/neuron/lib/libnccom.so.2",
		Exits:    "0 loads and every fact was seen (--matrix: the table printed), 4 nothing seen stops it but a fact was not seen (a side without DWARF, an unreadable compat id), 8 it does not load, refuses the plugin or disagrees silently on a shared struct, 1 error (an input unreadable or not ELF), 2 usage error",
		Run:      compatCmd}
}

// specsFlag is the repeatable --spec of compat: the releases rules and
// fixes come from, the embedded ones when none is given.
type specsFlag []string

func (s *specsFlag) String() string     { return fmt.Sprint(*s) }
func (s *specsFlag) Set(v string) error { *s = append(*s, v); return nil }

func compatCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var specs specsFlag
	fs.Var(&specs, "spec", "a release NAME or spec DIR the rules and fixes come from (repeatable; default: every embedded release)")
	release := fs.String("release", "", "the release whose rules apply when libnrt names none (a libnrt not built by nrtabi)")
	format := fs.String("format", "text", "output format: text, json, junit (one test case per stage) or sarif (docs/sarif.md)")
	var sf sarifFlags
	sf.register(fs)
	var with specsFlag
	fs.Var(&with, "with", "a package (a debug package) read beside the arguments: its debug files answer the sides' DWARF lookup (repeatable)")
	matrix := fs.Bool("matrix", false, "judge every libnrt release against every libnccom release of the spec set, from the spec rows alone")
	var dirs debugDirFlag
	dirs.register(fs)
	outDir := fs.String("o", "", "with --matrix --format html: the directory the page is written to (as index.html)")
	pos, err := c.ParseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if *format == "html" && !*matrix {
		return c.Usagef("--format html draws the release matrix: give --matrix (a pairing's report is text, json, junit or sarif)")
	}
	if *format != "text" && *format != "json" && *format != "junit" && *format != "sarif" && *format != "html" {
		return c.Usagef("--format %q: use text, json, junit or sarif (html with --matrix)", *format)
	}
	if err := htmlFlags(*format, *outDir); err != nil {
		return c.Usagef("%v", err)
	}
	if err := sf.check(*format); err != nil {
		return c.Usagef("%v", err)
	}
	if *matrix {
		if len(pos) == 1 {
			return c.Usagef("--matrix DIR...: give two or more directories or packages (each holding a libnrt and a libnccom), or none for the spec set's releases")
		}
		if *format == "junit" || *format == "sarif" {
			return c.Usagef("--matrix prints text, json or html")
		}
		set, err := loadCompatSet(specs)
		if err != nil {
			return err
		}
		var m *compat.Matrix
		source := "the embedded releases"
		if len(specs) > 0 {
			source = "--spec " + strings.Join(specs, ", ")
		}
		if len(pos) == 0 {
			if *release != "" {
				return c.Usagef("--release is for files: the spec set's matrix takes each release's own rules")
			}
			m = compat.ReleaseMatrix(set)
		} else {
			sets, err := compatSets(pos, with)
			if err != nil {
				return err
			}
			m, err = compat.InputMatrix(ctx, set, sets, compat.Options{Release: *release, Lookup: elfread.Lookup{Dirs: dirs.get(), Fetch: cli.Debuginfod()}})
			if err != nil {
				return err
			}
			source = "the files given: " + strings.Join(pos, ", ") + " (rules from " + source + ")"
		}
		switch *format {
		case "json":
			return render.JSON(out, m)
		case "html":
			path, err := html.WriteDir(*outDir, m.Page(source))
			if err != nil {
				return fmt.Errorf("-o %s: %w", *outDir, err)
			}
			fmt.Fprintf(out, "wrote %s\n", esc.String(path))
			return nil
		}
		matrixText(out, m)
		return nil
	}
	if len(pos) != 2 && len(pos) != 3 {
		return c.Usagef("want LIBNRT LIBNCCOM [PLUGIN], e.g. nrtabi compat libnrt.so.1 libnccom.so.2")
	}
	set, err := loadCompatSet(specs)
	if err != nil {
		return err
	}
	sides, err := compatInputs(pos, with)
	if err != nil {
		return err
	}
	plugin := compat.Named{}
	if len(sides) == 3 {
		plugin = sides[2]
	}
	r, err := compat.PredictInputs(ctx, set, sides[0], sides[1], plugin,
		compat.Options{Release: *release, Lookup: elfread.Lookup{Dirs: dirs.get(), Fetch: cli.Debuginfod()}})
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		if err := render.JSON(out, r); err != nil {
			return err
		}
	case "junit":
		if err := render.JUnit(out, compatJUnit(r)); err != nil {
			return err
		}
	case "sarif":
		if err := writeCompatSARIF(out, r, sf.root); err != nil {
			return err
		}
	default:
		compatText(out, r)
	}
	return cli.Exit(r.Exit)
}

func loadCompatSet(names []string) (*compat.Set, error) {
	if len(names) == 0 {
		names = spec.Releases()
	}
	var specs []*spec.Spec
	for _, n := range names {
		sp, _, err := cli.Resolve(n)
		if err != nil {
			return nil, fmt.Errorf("--spec %s: %w", n, err)
		}
		specs = append(specs, sp)
	}
	return compat.NewSet(specs), nil
}

// verdictWords are the verdict line's words per class, "" for a class it
// has none for. A switch, not a map: a package-level map is built at init,
// which every command runs (docs/benchmarks.md#start-up-2026-12-04).
func verdictWords(c compat.Class) string {
	switch c {
	case compat.Loads:
		return "LOADS"
	case compat.Reverse:
		return "FAILS AT DLOPEN (reverse version needs)"
	case compat.Dlsym:
		return "FAILS THE ALL-OR-NOTHING DLSYM"
	case compat.CompatGate:
		return "REFUSED AT THE COMPAT GATE"
	case compat.NetPlugin:
		return "LOADS, PLUGIN REFUSED"
	case compat.Layout:
		return "LOADS, SHARED STRUCT LAYOUTS DIFFER"
	case compat.Unknown:
		return "UNKNOWN"
	}
	return ""
}

func compatText(w io.Writer, r *compat.Report) {
	render.Printf(w, "libnrt    %s (release %s: %s)\n", r.Libnrt, r.Release, r.ReleaseFrom)
	render.Printf(w, "libnccom  %s\n", r.Libnccom)
	if r.Plugin != "" {
		render.Printf(w, "plugin    %s\n", r.Plugin)
	}
	for _, f := range r.Findings {
		mark := "note"
		if f.Fatal {
			mark = "FAIL"
		}
		render.Printf(w, "  %s [%s] %s: %s\n", mark, string(f.Class), f.Subject, f.Message)
		if f.Fix != "" {
			render.Printf(w, "       fix: %s\n", f.Fix)
		}
	}
	render.Printf(w, "layout: %s\n", r.Layout)
	for _, u := range r.Unseen {
		render.Printf(w, "unseen: %s\n", u)
	}
	fmt.Fprintf(w, "verdict: %s (exit %d)\n", verdictWords(r.Verdict), r.Exit)
}

// compatJUnit is one suite, one case per stage: dlopen, the probe and the
// dlsym, the gate, the plugin, the layouts; a stage whose facts were not
// seen is skipped with the reason.
func compatJUnit(r *compat.Report) render.Suites {
	s := render.Suite{Name: r.Libnrt + " + " + r.Libnccom}
	stages := []compat.Class{compat.Reverse, compat.Dlsym, compat.CompatGate, compat.NetPlugin, compat.Layout}
	for _, st := range stages {
		c := render.Case{Name: string(st), Classname: "compat"}
		for _, f := range r.Findings {
			if f.Class == st && f.Fatal && c.Failure == nil {
				c.Failure = &render.Failure{Message: f.Subject, Type: string(st), Text: f.Message + "\nfix: " + f.Fix}
			}
		}
		if st == compat.Layout && c.Failure == nil && r.Layout != compat.LayoutSame {
			c.Skipped = &render.Skipped{Message: "layout " + r.Layout}
		}
		if st == compat.NetPlugin && r.Plugin == "" {
			c.Skipped = &render.Skipped{Message: "no plugin given"}
		}
		s.Add(c)
	}
	doc := render.Suites{Name: "nrtabi compat", Suites: []render.Suite{s}}
	doc.Tests, doc.Failures, doc.Skipped = s.Tests, s.Failures, s.Skipped
	return doc
}

var _ flag.Value = (*specsFlag)(nil)

// matrixText is the release matrix as a table, libnrt releases down,
// libnccom releases across, each cell its class and its notes' numbers,
// the notes below.
func matrixText(w io.Writer, m *compat.Matrix) {
	width := len("libnrt / libnccom")
	for _, r := range m.Releases {
		width = max(width, len(r))
	}
	cells := map[[2]string]compat.Cell{}
	cellWidth := width
	for _, c := range m.Cells {
		cells[[2]string{c.Libnrt, c.Libnccom}] = c
		cellWidth = max(cellWidth, len(cellWord(c)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", width+2, "libnrt / libnccom")
	for _, r := range m.Releases {
		fmt.Fprintf(&b, "%-*s", cellWidth+2, r)
	}
	rows := []string{b.String()}
	for _, a := range m.Releases {
		b.Reset()
		fmt.Fprintf(&b, "%-*s", width+2, a)
		for _, r := range m.Releases {
			fmt.Fprintf(&b, "%-*s", cellWidth+2, cellWord(cells[[2]string{a, r}]))
		}
		rows = append(rows, b.String())
	}
	for _, row := range rows {
		render.Printf(w, "%s\n", strings.TrimRight(row, " "))
	}
	for i, n := range m.Notes {
		render.Printf(w, "[%d] %s\n", i+1, n)
	}
}

func cellWord(c compat.Cell) string {
	s := string(c.Verdict)
	for _, n := range c.Notes {
		s += fmt.Sprintf("[%d]", n+1)
	}
	return s
}
