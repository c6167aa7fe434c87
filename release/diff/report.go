package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

var groupOrder = []string{"compatibility", "forward", "reverse", "versions", "structs", "constants", "messages"}

// WriteText prints the report grouped by area, with a one-line verdict.
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "diff %s -> %s\n", r.Old.Name, r.New.Name)
	fmt.Fprintf(w, "  old: %s\n  new: %s\n", describeSide(r.Old), describeSide(r.New))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	runAt := map[int]MoveGroup{}
	if !r.Verbose {
		for _, m := range r.Moves {
			runAt[m.First] = m
		}
	}
	for _, g := range groupOrder {
		first := true
		for i := 0; i < len(r.Changes); i++ {
			c := r.Changes[i]
			if c.Group != g {
				continue
			}
			if first {
				fmt.Fprintf(tw, "%s\n", g)
				first = false
			}
			if m, ok := runAt[i]; ok {
				fmt.Fprintf(tw, "  %s\t%s\t%s.%s .. %s\t%+d\t(%s; --verbose lists each)\n",
					c.Severity, c.Kind, m.Struct, m.Fields[0], m.Fields[len(m.Fields)-1], m.Delta, m.Summary())
				i += len(m.Fields) - 1
				continue
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
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Severity, c.Kind, c.Subject, change, detail)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, r.Verdict())
	return nil
}

func describeSide(s Side) string {
	out := s.Name + " from " + s.Source
	if s.Source == s.Name {
		out = s.Source // a directory or files, named as given
	}
	if s.Libnrt != "" || s.Libnccom != "" {
		out += fmt.Sprintf(" (libnrt build-id %s, libnccom build-id %s)", orDash(s.Libnrt), orDash(s.Libnccom))
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
	if len(r.Changes) == 0 {
		return fmt.Sprintf("verdict: no changes (exit %d)", r.Summary.Exit)
	}
	word := "compatible"
	switch {
	case r.Summary.Incompatible > 0:
		word = "INCOMPATIBLE"
	case r.Summary.Compatible == 0:
		word = "no boundary change"
	}
	return fmt.Sprintf("verdict: %s: %d changes (%d incompatible, %d compatible, %d informational) (exit %d)",
		word, len(r.Changes), r.Summary.Incompatible, r.Summary.Compatible, r.Summary.Informational, r.Summary.Exit)
}

// WriteJSON prints the report in its stable JSON form.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
