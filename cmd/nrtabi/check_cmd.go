package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	register(&command{name: "check", summary: "check binaries' DWARF layouts and link contract against a spec (exit bits 4 = compatible, 8 = incompatible change)", run: checkCmd})
}

// layoutSpecs loads the release facts and the struct facts: --spec DIR may
// be a full release or a struct fragment (nrtabi extract); a fragment's
// structs are checked and the link contract comes from --release.
func layoutSpecs(release, dir string) (full, structs *spec.Spec, where string, err error) {
	full, err = spec.Load(release)
	if err != nil {
		return nil, nil, "", err
	}
	if dir == "" {
		return full, full, fmt.Sprintf("spec/%s (embedded)", release), nil
	}
	s, err := spec.LoadDir(dir)
	if err != nil {
		return nil, nil, "", err
	}
	if s.IsFragment() {
		return full, s, fmt.Sprintf("%s (fragment; link contract from spec/%s)", dir, release), nil
	}
	return s, s, dir, nil
}

func checkCmd(args []string, out, errw io.Writer) int {
	fs := newFlags("check", errw)
	fs.Usage = func() {
		fmt.Fprintln(errw, "usage: nrtabi check [--release R | --spec DIR] [--role libnrt|libnccom|none|auto] [--format text|json|junit] [--addresses] [--require STRUCT]... [--debug-dir DIR]... [--allow-missing-debug] [--headers DIR [--include FILE]...] FILE...")
		fs.PrintDefaults()
	}
	release := fs.String("release", spec.Default, "embedded release whose facts to check against")
	dir := fs.String("spec", "", "read the spec from this directory (a full release or a struct fragment)")
	role := fs.String("role", "auto", "link contract to check: libnrt, libnccom, none, or auto (from the SONAME)")
	format := fs.String("format", "text", "output format: text, json or junit (one test case per struct and per contract rule)")
	headers := fs.String("headers", "", "also check the C headers under this directory (compiled with gcc -g in a temporary directory)")
	allowMissing := fs.Bool("allow-missing-debug", false, "check without a dwz supplementary file or .dwo the DWARF refers to when it cannot be found (the verdict says what was not read); default: exit 1 naming it")
	addresses := fs.Bool("addresses", false, "also compare definer, trampoline and slot addresses with the release binaries")
	var require, dirs, include listFlag
	fs.Var(&include, "include", "with --headers: a header to read, relative to DIR (repeatable, or a comma list); default every *.h")
	fs.Var(&require, "require", "struct that must be found in some input (repeatable, or a comma list)")
	fs.Var(&dirs, "debug-dir", "directory of separate debug files (repeatable; default /usr/lib/debug)")
	files, rc := parseFlagsAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(files) == 0 && *headers == "" {
		fmt.Fprintln(errw, "nrtabi check: name at least one FILE (a shared object, executable, .o or debug file) or --headers DIR")
		return exitUsage
	}
	if len(include) > 0 && *headers == "" {
		fmt.Fprintln(errw, "nrtabi check: --include names a header under --headers DIR; give --headers too")
		return exitUsage
	}
	if *format != "text" && *format != "json" && *format != "junit" {
		fmt.Fprintf(errw, "nrtabi check: --format %q: use text, json or junit\n", *format)
		return exitUsage
	}
	full, structs, where, err := layoutSpecs(*release, *dir)
	if err != nil {
		return reportSpecError(errw, where, err)
	}
	// No forced collection here: the embedded releases load from Go literals
	// and a fragment is small, so the garbage is a few hundred KB, while
	// debug.FreeOSMemory cost milliseconds per run (bench/layoutcheck).
	var notes []string
	if *headers != "" {
		h, err := layoutcheck.CompileHeaders(*headers, include)
		if code := layoutError(errw, "check", err); code >= 0 {
			return code
		}
		defer h.Close()
		files, notes = append(files, h.Object), h.Notes
	}
	rep, err := layoutcheck.Check(files, layoutcheck.Options{
		Spec: full, Structs: structs, StructsSrc: where, Role: *role, Addresses: *addresses,
		Require: require, DebugDirs: debugDirs(dirs), AllowMissingDebug: *allowMissing,
	})
	if code := layoutError(errw, "check", err); code >= 0 {
		return code
	}
	rep.Notes = append(rep.Notes, notes...)
	if hf := rep.Files[len(rep.Files)-1]; *headers != "" && len(hf.Structs) == 0 {
		fmt.Fprintf(errw, "nrtabi check: %s: declares none of the %d structs of %s; name the directory holding the vendor's headers (the one with nrt/nec.h)\n", hf.Path, len(structs.Structs), where)
		return exitError
	}
	if *format == "junit" {
		if err := rep.WriteJUnit(out); err != nil {
			fmt.Fprintf(errw, "nrtabi check: %v\n", err)
			return exitError
		}
		return rep.Exit
	}
	if *format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(errw, "nrtabi check: %v\n", err)
			return exitError
		}
	} else {
		rep.WriteText(out)
	}
	return rep.Exit
}

// layoutError prints a layoutcheck error as one line and returns its exit
// status, or -1 when there is none.
func layoutError(errw io.Writer, cmd string, err error) int {
	if err == nil {
		return -1
	}
	var ue *layoutcheck.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(errw, "nrtabi %s: %v\n", cmd, err)
		return exitUsage
	}
	fmt.Fprintf(errw, "nrtabi %s: %v\n", cmd, err)
	return exitError
}
