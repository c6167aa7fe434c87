package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nrtabi/nrtabi/layoutcheck/releasediff"
	"github.com/nrtabi/nrtabi/spec"
)

func init() {
	register(&command{name: "diff", summary: "classify what changed between two releases (names, spec directories or binaries)", run: diffCmd})
}

func diffCmd(args []string, out, errw io.Writer) int {
	fs := newFlags("diff", errw)
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(errw, "usage: nrtabi diff [--format text|json] OLD NEW")
		fmt.Fprintln(errw, "OLD and NEW are each an embedded release name or a spec directory.")
		fmt.Fprintln(errw, "Exit status: 0 no change, 4 compatible changes only, 8 incompatible changes, 1 error, 2 usage.")
		fs.PrintDefaults()
	}
	pos, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) != 2 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	var sides [2]*spec.Spec
	for i, arg := range pos {
		s, err := loadSide(arg)
		if err != nil {
			return reportSpecError(errw, arg, err)
		}
		sides[i] = s
	}
	r := releasediff.Diff(sides[0], sides[1])
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

// parseInterleaved parses flags that may follow positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, int) {
	var pos []string
	for {
		if rc := parse(fs, args); rc >= 0 {
			return nil, rc
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, -1
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
