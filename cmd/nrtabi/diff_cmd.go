package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/releasediff"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	register(&command{name: "diff", summary: "classify what changed between two releases (names, spec directories or binaries)", run: diffCmd})
}

func diffCmd(args []string, out, errw io.Writer) int {
	fs := newFlags("diff", errw)
	format := fs.String("format", "text", "output format: text or json")
	verbose := fs.Bool("verbose", false, "text: list every moved field, not one row per run of fields moved by the same delta")
	fs.Usage = func() {
		fmt.Fprintln(errw, "usage: nrtabi diff [--format text|json] [--verbose] OLD NEW")
		fmt.Fprintln(errw, "OLD and NEW are each an embedded release name, a spec directory, or binaries")
		fmt.Fprintln(errw, "(a comma list of files, e.g. libnrt.so.1,libnccom.so: read like `release new`")
		fmt.Fprintln(errw, "on top of the other side, or of the default release).")
		fmt.Fprintln(errw, "Exit status: 0 no change, 4 compatible changes only, 8 incompatible changes, 1 error, 2 usage.")
		fs.PrintDefaults()
	}
	var dbg listFlag
	fs.Var(&dbg, "debug-dir", "where to look for separate debug files of binary sides")
	pos, rc := parseFlagsAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) != 2 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	// Spec sides first: a binary side is read on top of the other side's spec.
	var sides [2]*spec.Spec
	var bins [2][]string
	for i, arg := range pos {
		if files := binaryFiles(arg); files != nil {
			bins[i] = files
			continue
		}
		s, err := loadSide(arg)
		if err != nil {
			return reportSpecError(errw, arg, err)
		}
		sides[i] = s
	}
	for i := range pos {
		if bins[i] == nil {
			continue
		}
		base := sides[1-i]
		if base == nil {
			var err error
			if base, err = spec.Load(spec.Default); err != nil {
				return reportSpecError(errw, spec.Default, err)
			}
		}
		name := "binaries-" + fmt.Sprint(i)
		rel, _, err := newReleaseFrom(base, name, bins[i], debugDirs(dbg), "")
		if err != nil {
			return reportSpecError(errw, pos[i], err)
		}
		s := rel.Spec
		s.Dir, s.Release.Name = pos[i], pos[i] // the side is the files named
		sides[i] = s
	}
	r := releasediff.Diff(sides[0], sides[1])
	r.Verbose = *verbose
	var err error
	if *format == "json" {
		err = r.WriteJSON(out)
	} else {
		err = r.WriteText(out)
	}
	if err != nil {
		fmt.Fprintf(errw, "nrtabi diff: %v\n", err)
		return exitError
	}
	return r.Summary.Exit
}

// loadSide reads an embedded release by name, else a spec directory.
func loadSide(arg string) (*spec.Spec, error) {
	for _, r := range spec.Releases() {
		if r == arg {
			return spec.Load(arg)
		}
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return spec.LoadDir(arg)
	}
	return nil, fmt.Errorf("%q is neither an embedded release (%v) nor a spec directory", arg, spec.Releases())
}

// binaryFiles reports the files a binary side names: a comma list, or one
// existing regular file. Anything else is a release or a spec directory.
func binaryFiles(arg string) []string {
	parts := strings.Split(arg, ",")
	for _, p := range parts {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			if len(parts) > 1 {
				return parts // let the reader name the missing file
			}
			return nil
		}
	}
	return parts
}
