package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

func init() {
	app.Register(&cli.Command{Name: "diff",
		Summary: "classify what changed between two releases (names, spec directories or binaries); " +
			"OLD and NEW are each a spec (NAME|DIR, resolved like --spec) or binaries (one existing file, or a comma list, " +
			"read like `release new` on top of the other side, or of the default release); " +
			"exit 0 no change, 4 compatible changes only, 8 incompatible changes, 1 error, 2 usage",
		Synopsis: "[--format text|json] [--verbose] [--debug-dir DIR]... OLD NEW",
		Example:  "diff 2.31.24 2.32.0-synthetic",
		Run:      diffCmd})
}

func diffCmd(c *cli.Command, args []string, out, errw io.Writer) int {
	fs := c.Flags(errw)
	format := fs.String("format", "text", "output format: text or json")
	verbose := fs.Bool("verbose", false, "text: list every moved field, not one row per run of fields moved by the same delta")
	var dbg debugDirFlag
	dbg.register(fs)
	pos, rc := c.ParseAnywhere(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) != 2 {
		return c.Usagef(errw, "want OLD NEW, got %d argument(s)", len(pos))
	}
	if *format != "text" && *format != "json" {
		return c.Usagef(errw, "--format %q: use text or json", *format)
	}
	// Spec sides first: a binary side is read on top of the other side's spec.
	var sides [2]*spec.Spec
	var bins [2][]string
	for i, arg := range pos {
		if files := binaryFiles(arg); files != nil {
			bins[i] = files
			continue
		}
		s, where, err := cli.ResolveTo(arg, errw) // a shadowing checkout release is named on stderr
		if err != nil {
			return reportSpecError(c, errw, where, err)
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
			if base, err = compiled.Load(spec.Default); err != nil {
				return reportSpecError(c, errw, spec.Default, err)
			}
		}
		name := "binaries-" + fmt.Sprint(i)
		rel, _, err := newReleaseFrom(base, name, bins[i], dbg.get(), "")
		if err != nil {
			return reportSpecError(c, errw, pos[i], err)
		}
		s := rel.Spec
		s.Dir, s.Release.Name = pos[i], pos[i] // the side is the files named
		sides[i] = s
	}
	r := diff.Diff(sides[0], sides[1])
	r.Verbose = *verbose
	var err error
	if *format == "json" {
		err = r.WriteJSON(out)
	} else {
		err = r.WriteText(out)
	}
	if err != nil {
		return c.Errorf(errw, "%v", err)
	}
	return r.Summary.Exit
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
