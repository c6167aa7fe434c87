package diff

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/render"
)

var groupOrder = []string{"compatibility", "forward", "reverse", "versions", "net", "structs", "constants", "messages"}

// WriteText prints the report grouped by area, with a one-line verdict.
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "diff %s -> %s\n", r.Old.Name, r.New.Name)
	fmt.Fprintf(w, "  old: %s\n  new: %s\n", describeSide(r.Old), describeSide(r.New))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, g := range groupOrder {
		first := true
		for _, c := range r.Changes {
			if c.Group != g {
				continue
			}
			if first {
				fmt.Fprintf(tw, "%s\n", g)
				first = false
			}
			// A fact's consequences are indented under it, not facts of
			// their own (docs/nrtabi-diff.md).
			c.Walk(func(x Change, depth int) { r.row(tw, x, depth) })
			if c.Waived != nil {
				fmt.Fprintf(tw, "      %s\n", esc.String(c.Waived.Note()))
			}
		}
	}
	tw.Flush()
	fmt.Fprintln(w, r.Verdict())
	return nil
}

// row prints one change. Names in it may come from a binary's DWARF (an
// opaque range's covers name its members), so every string is escaped
// (package esc) before it reaches a terminal.
func (r Report) row(w io.Writer, c Change, depth int) {
	c.Subject, c.Old, c.New, c.Detail = esc.String(c.Subject), esc.String(c.Old), esc.String(c.New), esc.String(c.Detail)
	c.Fields, c.EmbeddedIn = render.EscapeAll(c.Fields), render.EscapeAll(c.EmbeddedIn)
	indent, mark := render.Consequence(depth)
	if len(c.Fields) > 1 {
		fmt.Fprintf(w, "  %s%s%s\t%s\t%s\t%+d\t(%s; --verbose lists each)\n", indent, mark, c.Severity, c.Kind, c.Subject, c.Delta, c.Detail)
		if r.Verbose {
			st := c.Subject[:strings.IndexByte(c.Subject, '.')]
			for i, f := range c.Fields {
				fmt.Fprintf(w, "  %s    %s\t%s\t%s.%s\t%+d\t(%d of %d)\n", indent, c.Severity, c.Kind, st, f, c.Delta, i+1, len(c.Fields))
			}
		}
		return
	}
	change := c.Old + " -> " + c.New
	switch {
	case c.Old == "":
		change = c.New
	case c.New == "":
		change = c.Old
	}
	detail := ""
	if c.Detail != "" {
		detail = "(" + c.Detail + ")"
	}
	if len(c.EmbeddedIn) > 0 {
		detail = strings.TrimSpace(detail + " (embedded in " + strings.Join(c.EmbeddedIn, ", ") + ")")
	}
	fmt.Fprintf(w, "  %s%s%s\t%s\t%s\t%s\t%s\n", indent, mark, c.Severity, c.Kind, c.Subject, change, detail)
}

func describeSide(s Side) string {
	out := s.Name + " from " + s.Source
	if s.Source == s.Name {
		out = s.Source // a directory or files, named as given
	}
	var ids []string
	if s.Libnrt != "" || s.Libnccom != "" {
		ids = append(ids, "libnrt build-id "+orDash(s.Libnrt), "libnccom build-id "+orDash(s.Libnccom))
	}
	if s.Libnet != "" {
		ids = append(ids, "libnccom-net build-id "+s.Libnet)
	}
	if ids != nil {
		out += " (" + strings.Join(ids, ", ") + ")"
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Verdict is the one-line summary.
func (r Report) Verdict() string {
	exit := fmt.Sprintf(" (exit %d)", r.Summary.Exit)
	if r.Quoted {
		exit = ""
	}
	if len(r.Changes) == 0 {
		return "verdict: no changes" + exit
	}
	word := "compatible"
	switch {
	case r.Summary.Incompatible == 0 && r.Summary.Compatible == 0 && r.Summary.Waived > 0:
		word = "only waived changes"
	case r.Summary.Incompatible > 0:
		word = "INCOMPATIBLE"
	case r.Summary.Compatible == 0:
		word = "no boundary change"
	}
	waived := ""
	if r.Summary.Waived > 0 {
		waived = fmt.Sprintf(", %d waived", r.Summary.Waived)
	}
	return fmt.Sprintf("verdict: %s: %d changes (%d incompatible, %d compatible, %d informational%s; each fact once, its consequences under it)%s",
		word, len(r.Changes), r.Summary.Incompatible, r.Summary.Compatible, r.Summary.Informational, waived, exit)
}

// WriteJSON prints the report in its stable JSON form.
func (r Report) WriteJSON(w io.Writer) error { return render.JSON(w, r) }
