package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/readers/inputs"
	"github.com/nrtabi/nrtabi/spec"
)

func checkCommand() *cli.Command {
	return &cli.Command{Name: "check", Summary: "check binaries' DWARF layouts and link contract against a spec (exit bits 4 = compatible, 8 = incompatible change)",
		Synopsis: "[--spec NAME|DIR [--base NAME|DIR]] [--role libnrt|libnccom|libnccom-net|none|auto] [--format text|json|junit|sarif] [--source-root DIR] [--fail-on none|compatible|incompatible] [--waivers FILE [--fail-on-unused-waivers]] [--addresses] [--require STRUCT]... [--debug-dir DIR]... [--allow-missing-debug] [--allow-empty] [--headers DIR [--include FILE]... [-I DIR]... [--cflags FLAGS]] [-j N] [--non-elf skip|fail] FILE|DIR...",
		Example:  "check --spec 2.31.24 --require nec_version_info_t build/libnrt.so.1 build/libnccom.so.2",
		Exits:    changeExits,
		Run:      checkCmd}
}

// layoutFlags are the spec flags of check and show: --spec may name a full
// release or a struct fragment (nrtabi extract); a fragment's structs are
// checked and the link contract comes from --base.
type layoutFlags struct{ spec, base cli.SpecFlag }

func (l *layoutFlags) register(fs *flag.FlagSet) {
	l.spec.Register(fs, "spec", spec.Default, "the spec to check against (a full release or a struct fragment)")
	l.base.Register(fs, "base", spec.Default, "with a fragment --spec: the release whose link contract and names complete it")
}

// load returns the release facts and the struct facts.
func (l *layoutFlags) load() (full, structs *spec.Spec, where string, err error) {
	s, where, err := l.spec.Load()
	if err != nil {
		return nil, nil, where, err
	}
	if !s.IsFragment() {
		return s, s, where, nil
	}
	full, bwhere, err := l.base.Load()
	if err != nil {
		return nil, nil, bwhere, err
	}
	return full, s, fmt.Sprintf("%s (fragment; link contract from %s)", where, bwhere), nil
}

func checkCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	doc := &errDoc{cmd: c, schema: layoutcheck.Schema}
	return doc.finish(check(ctx, c, doc, args, out, errw), out)
}

func check(ctx context.Context, c *cli.Command, doc *errDoc, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	var lf layoutFlags
	lf.register(fs)
	role := fs.String("role", "auto", "link contract to check: libnrt, libnccom, libnccom-net, none, or auto (from the SONAME)")
	format := fs.String("format", "text", "output format: text, json, junit (one test case per struct and per contract rule) or sarif (docs/sarif.md)")
	headers := fs.String("headers", "", "also check the C headers under this directory (compiled with gcc -g in a temporary directory)")
	allowMissing := fs.Bool("allow-missing-debug", false, "check without a dwz supplementary file or .dwo the DWARF refers to when it cannot be found (the verdict says what was not read); default: exit 1 naming it")
	addresses := fs.Bool("addresses", false, "also compare definer, trampoline and slot addresses with the release binaries")
	allowEmpty := fs.Bool("allow-empty", false, "accept a check that found none of the spec's structs and no library role (default: exit 1 saying what was not found)")
	verbose := fs.Bool("verbose", false, "text: list every field of a run of fields moved by the same delta")
	var require cli.ListFlag
	var cf compileFlags
	cf.register(fs, "with --headers")
	fs.Var(&require, "require", "struct that must be found in some input (repeatable, or a comma list)")
	var dirs debugDirFlag
	dirs.register(fs)
	var failOn failOnFlag
	failOn.register(fs)
	var many manyFlags
	many.register(fs)
	var waivers waiverFlags
	waivers.register(fs)
	var sf sarifFlags // --format sarif
	sf.register(fs)
	files, err := c.ParseAnywhere(fs, args)
	// A --format read before a wrong flag still decides the error's form.
	if *format == "json" || *format == "junit" || *format == "sarif" {
		doc.format = *format
	}
	if err != nil {
		return err
	}
	if err := failOn.check(); err != nil {
		return c.Usagef("%v", err)
	}
	if err := many.check(); err != nil {
		return c.Usagef("%v", err)
	}
	if len(files) == 0 && *headers == "" {
		return c.Usagef("name at least one FILE (a shared object, executable, .o or debug file) or --headers DIR")
	}
	if cf.given() && *headers == "" {
		return c.Usagef("--include, -I and --cflags are how the headers under --headers DIR are compiled; give --headers too")
	}
	if *format != "text" && *format != "json" && *format != "junit" && *format != "sarif" {
		return c.Usagef("--format %q: use text, json, junit or sarif", *format)
	}
	if err := sf.check(*format); err != nil {
		return c.Usagef("%v", err)
	}
	if err := waivers.load(); err != nil {
		return c.Errorf("%v", err)
	}
	doc.at("--spec " + lf.spec.Value)
	full, structs, where, err := lf.load()
	if err != nil {
		if where != "" {
			doc.at(where)
		}
		return specError(c, where, err)
	}
	if err := checkArgOrder(c, files, structs); err != nil {
		return err
	}
	doc.reading(strings.Join(files, ", "))
	ins, err := many.expand(files)
	if err != nil {
		return err
	}
	if len(files) > 0 && *headers == "" && !anyRead(ins) {
		return c.Errorf("%s: no ELF file to check (%d entries not read; the report of --non-elf skip lists them); name a shared object, executable, .o or debug file, or a directory holding one", strings.Join(files, ", "), len(ins))
	}
	// No forced collection here: an embedded release is static data and a
	// fragment is small, so loading leaves little garbage, while
	// debug.FreeOSMemory cost milliseconds per run (bench/layoutcheck).
	var notes []string
	object := "" // the compiled headers, named by their directory in the error document
	if *headers != "" {
		doc.reading(*headers)
		// The spec's structs decide which headers must compile: one that
		// defines none of them and does not compile is a warning
		// (docs/layoutcheck.md#headers-as-input).
		h, err := layoutcheck.CompileHeadersContext(ctx, *headers,
			cf.options(structs))
		if err != nil {
			return layoutError(err) // naming the header that failed
		}
		defer h.Close()
		object = h.Object
		doc.alias = map[string]string{object: *headers}
		files, notes = append(files, h.Object), h.Notes
		ins = append(ins, inputs.Input{Name: h.Object, Path: h.Object})
		for _, w := range h.Warnings {
			fmt.Fprintf(errw, "%s: warning: %s\n", c.FullName(), esc.String(w))
			notes = append(notes, w)
		}
	}
	named := make([]string, len(files))
	for i, f := range files {
		named[i] = f
		if f == object {
			named[i] = *headers
		}
	}
	doc.reading(strings.Join(named, ", "))
	rep, err := layoutcheck.CheckInputs(ctx, ins, layoutcheck.Options{
		Spec: full, Structs: structs, StructsSrc: where, Role: *role, Addresses: *addresses,
		Require: require, DebugDirs: dirs.get(), Fetch: cli.Debuginfod(), AllowMissingDebug: *allowMissing, AllowEmpty: *allowEmpty || *headers != "", Jobs: many.jobs,
	})
	if err != nil {
		return layoutError(err)
	}
	rep.Notes = append(rep.Notes, notes...)
	// With --headers, a tree declaring none of the spec's structs is
	// refused below, naming the directory; inputs beside it that hold
	// nothing are accepted only when the headers held something.
	if *headers != "" && len(rep.Files[len(rep.Files)-1].Structs) == 0 {
		hf := rep.Files[len(rep.Files)-1]
		doc.at(*headers)
		return c.Errorf("%s: declares none of the %d structs of %s; name the directory holding the vendor's headers (the one with nrt/nec.h)", hf.Path, len(structs.Structs), where)
	}
	waivers.check(rep)
	// The report states the status the process exits with.
	rep.Exit = failOn.exit(rep.Exit)
	doc.wrote = true
	switch *format {
	case "junit":
		err = rep.WriteJUnit(out)
	case "json":
		err = render.JSON(out, rep)
	case "sarif":
		err = rep.WriteSARIF(out, cli.ModuleVersion(), sf.root)
	default:
		rep.Verbose = *verbose
		rep.WriteText(out)
	}
	if err != nil {
		return err
	}
	if err := waivers.unused(c.FullName(), errw); err != nil {
		return err
	}
	return cli.Exit(rep.Exit)
}

// layoutError is a layoutcheck error as the command's: a *UsageError
// (a --require or --role the spec refuses) exits 2, in one line without the
// synopsis; any other is exit 1.
func layoutError(err error) error {
	var ue *layoutcheck.UsageError
	if errors.As(err, &ue) {
		return cli.Wrap(cli.ExitUsage, err)
	}
	return err
}

// anyRead says whether some input is to be read, not only listed.
func anyRead(ins []inputs.Input) bool {
	for _, in := range ins {
		if in.Skip == "" {
			return true
		}
	}
	return false
}
