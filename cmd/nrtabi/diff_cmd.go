package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

func diffCommand() *cli.Command {
	return &cli.Command{Name: "diff",
		Summary: "classify what changed between two releases (names, spec directories, binaries or header directories); " +
			"OLD and NEW are each a spec (NAME|DIR, resolved like --spec), binaries (one existing file, or a comma list) " +
			"or a directory of C headers (one holding *.h and no *.toml), the last two read like `release new` on top of " +
			"the other side, or of the default release",
		Synopsis: "[--format text|json|sarif|html] [-o DIR] [--source-root DIR] [--fail-on none|compatible|incompatible] [--waivers FILE [--fail-on-unused-waivers]] [--verbose] [--debug-dir DIR]... [--include FILE]... [-I DIR]... [--cflags FLAGS] OLD NEW",
		Example:  "diff 2.31.24 2.32.0-synthetic",
		Exits:    changeExits,
		Run:      diffCmd}
}

func diffCmd(ctx context.Context, c *cli.Command, args []string, out, errw io.Writer) error {
	doc := &errDoc{cmd: c, schema: diffSchema}
	return doc.finish(diffRun(ctx, c, doc, args, out, errw), out)
}

// sideNames name diff's two arguments in messages.
var sideNames = [2]string{"OLD", "NEW"}

func diffRun(ctx context.Context, c *cli.Command, doc *errDoc, args []string, out, errw io.Writer) error {
	fs := c.Flags(out, errw)
	format := fs.String("format", "text", "output format: text, json, sarif (docs/sarif.md) or html (a page written to -o DIR)")
	outDir := fs.String("o", "", "html: the directory to write index.html to (docs/nrtabi-diff.md#html-report)")
	verbose := fs.Bool("verbose", false, "text: list every moved field, not one row per run of fields moved by the same delta")
	var dbg debugDirFlag
	dbg.register(fs)
	var failOn failOnFlag
	failOn.register(fs)
	var cf compileFlags
	cf.register(fs, "for a header-directory side")
	var waivers waiverFlags
	waivers.register(fs)
	var sf sarifFlags // --format sarif
	sf.register(fs)
	pos, err := c.ParseAnywhere(fs, args)
	// A --format read before a wrong flag still decides the error's form.
	if *format == "json" || *format == "sarif" {
		doc.format = *format
	}
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return c.Usagef("want OLD NEW, got %d argument(s)", len(pos))
	}
	if *format != "text" && *format != "json" && *format != "sarif" && *format != "html" {
		return c.Usagef("--format %q: use text, json, sarif or html", *format)
	}
	if err := htmlFlags(*format, *outDir); err != nil {
		return c.Usagef("%v", err)
	}
	if err := sf.check(*format); err != nil {
		return c.Usagef("%v", err)
	}
	if err := failOn.check(); err != nil {
		return c.Usagef("%v", err)
	}
	if err := waivers.load(); err != nil {
		return c.Errorf("%v", err)
	}
	// Spec sides first: a binary or header side is read on top of the
	// other side's spec.
	var sides [2]*spec.Spec
	var bins [2][]string
	var hdrs [2]bool
	for i, arg := range pos {
		if files := binaryFiles(arg); files != nil {
			bins[i] = files
			continue
		}
		if headerDir(arg) {
			hdrs[i] = true
			continue
		}
		doc.at(arg)
		s, where, err := cli.ResolveTo(arg, errw) // a shadowing checkout release is named on stderr
		if err != nil {
			return specError(c, where, err)
		}
		sides[i] = s
	}
	if cf.given() && !hdrs[0] && !hdrs[1] {
		return c.Usagef("--include, -I and --cflags are for a side that is a directory of headers; neither OLD nor NEW is one")
	}
	specSides := sides // a read side derives from a spec side, never from the other read side
	for i := range pos {
		if bins[i] == nil && !hdrs[i] {
			continue
		}
		doc.reading(pos[i])
		base := specSides[1-i]
		if base == nil {
			var err error
			if base, err = compiled.Load(spec.Default); err != nil {
				return specError(c, spec.Default, err)
			}
		}
		files := bins[i]
		if hdrs[i] {
			// Read as release new --headers reads them, in memory
			// (docs/nrtabi-diff.md#sides).
			h, err := layoutcheck.CompileHeadersContext(ctx, pos[i],
				cf.options(base))
			if err != nil {
				return layoutError(fmt.Errorf("%s side %s: %w", sideNames[i], pos[i], err))
			}
			defer h.Close()
			for _, w := range h.Warnings {
				fmt.Fprintf(errw, "%s: warning: %s side: %s\n", c.FullName(), sideNames[i], esc.String(w))
			}
			files = []string{h.Object}
		}
		name := "binaries-" + fmt.Sprint(i)
		if hdrs[i] {
			name = "headers-" + fmt.Sprint(i)
		}
		// Packages (.deb, .rpm, .tar.*) are read in memory, each side's
		// debug packages paired with its libraries (docs/packages.md).
		rel, err := diffSide(ctx, base, name, files, dbg.get())
		if err != nil {
			return specError(c, pos[i], fmt.Errorf("%s side %s: %w", sideNames[i], pos[i], err))
		}
		s := rel.Spec
		s.Dir, s.Release.Name = pos[i], pos[i] // the side is the files named
		sides[i] = s
	}
	r := diff.Diff(sides[0], sides[1])
	r.Verbose = *verbose
	waivers.diff(&r)
	// The report states the status the process exits with.
	r.Summary.Exit = failOn.exit(r.Summary.Exit)
	doc.wrote = true
	if *format == "json" {
		err = r.WriteJSON(out)
	} else if *format == "sarif" {
		err = r.WriteSARIF(out, cli.ModuleVersion(), sf.root)
	} else if *format == "html" {
		err = writeDiffHTML(out, *outDir, r, sides[0], sides[1])
	} else {
		err = r.WriteText(out)
	}
	if err != nil {
		return err
	}
	if err := waivers.unused(c.FullName(), errw); err != nil {
		return err
	}
	return cli.Exit(r.Summary.Exit)
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

// headerDir reports whether dir is a directory of C headers rather than a
// spec directory: no *.toml at its top, and a *.h within the first
// maxHeaderScan entries under it.
func headerDir(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	if tomls, _ := filepath.Glob(filepath.Join(dir, "*.toml")); len(tomls) > 0 {
		return false
	}
	seen, found := 0, false
	stop := errors.New("stop")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxHeaderScan {
			return stop
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".h") {
			found = true
			return stop
		}
		return nil
	})
	return found
}

// maxHeaderScan bounds the walk that tells a header tree from a spec
// directory: a header tree shows a header long before this.
const maxHeaderScan = 10000
