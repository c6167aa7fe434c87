package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/render/html"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
)

// htmlFlags: a page is a file, so --format html needs -o DIR, and -o is
// for the page only (docs/nrtabi-diff.md#html-report).
func htmlFlags(format, dir string) error {
	switch {
	case format == "html" && dir == "":
		return errors.New("--format html writes a page: give -o DIR")
	case format != "html" && dir != "":
		return fmt.Errorf("-o %s: -o is for --format html; --format %s prints to stdout", dir, format)
	}
	return nil
}

// writeDiffHTML writes the report's page to dir/index.html (temp file and
// rename) and prints where it went and the verdict, as the text report
// ends.
func writeDiffHTML(out io.Writer, dir string, r diff.Report, old, new *spec.Spec) error {
	path, err := html.WriteDir(dir, r.Page(old, new))
	if err != nil {
		return fmt.Errorf("-o %s: %w", dir, err)
	}
	fmt.Fprintf(out, "wrote %s\n%s\n", esc.String(path), r.Verdict())
	return nil
}
