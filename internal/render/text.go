package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// Printf is fmt.Fprintf for the text a terminal shows: every string and
// error argument is escaped (package esc), since names, paths, build-ids
// and messages come from the inputs, so the line breaks and tabs of the
// format are the only ones in the output. Other arguments (numbers, kinds)
// are printed as fmt prints them.
func Printf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = esc.String(v)
		case []string:
			args[i] = EscapeAll(v)
		case error:
			args[i] = esc.String(v.Error())
		}
	}
	fmt.Fprintf(w, format, args...)
}

// EscapeAll is every string of ss escaped, in a new slice.
func EscapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = esc.String(s)
	}
	return out
}

// Consequence is how a row at depth shows under the fact it follows from:
// four spaces a level, and an arrow from the first level on. A fact's
// consequences are not facts of their own (docs/nrtabi-diff.md,
// docs/nrtabi-check.md), in check's report and diff's alike.
func Consequence(depth int) (indent, arrow string) {
	if depth > 0 {
		arrow = "-> "
	}
	return strings.Repeat("    ", depth), arrow
}
