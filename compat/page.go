package compat

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/internal/render/html"
)

// Page draws the matrix as the release report's page does a diff
// (docs/nrtabi-compat.md#the-release-matrix): one table, libnrt releases
// down and libnccom releases across, each cell its class as a word with
// links to the notes that explain it; the notes are the page's facts, in
// the text matrix's numbering. source names the spec set on the page.
func (m *Matrix) Page(source string) html.Page {
	p := html.Page{
		Title: "Which libnrt and libnccom releases load together",
		Lines: []string{"spec set: " + source, "releases: " + strings.Join(m.Releases, ", ")},
	}
	// A note's grade and class are its fact's stage.
	noteClass := make([]Class, len(m.Notes))
	copy(noteClass, m.NoteClasses)
	notes := html.Group{Name: "Notes"}
	for i, n := range m.Notes {
		notes.Facts = append(notes.Facts, html.Fact{Grade: classGrade(noteClass[i]), Kind: string(noteClass[i]), Subject: fmt.Sprintf("note %d", i+1), Detail: n})
	}
	p.Groups = []html.Group{notes}
	cells := map[[2]string]Cell{}
	for _, c := range m.Cells {
		cells[[2]string{c.Libnrt, c.Libnccom}] = c
	}
	tb := html.Table{Caption: "Verdict of each pairing", Corner: "libnrt \\ libnccom", Columns: m.Releases}
	loads := 0
	for _, a := range m.Releases {
		row := html.TableRow{Head: a}
		for _, b := range m.Releases {
			c, ok := cells[[2]string{a, b}]
			if !ok {
				c = Cell{Libnrt: a, Libnccom: b, Verdict: Unknown}
			}
			if c.Verdict == Loads {
				loads++
			}
			tc := html.TableCell{Grade: classGrade(c.Verdict), Text: string(c.Verdict),
				Label: fmt.Sprintf("libnrt %s with libnccom %s: %s", a, b, c.Verdict)}
			for _, n := range c.Notes {
				tc.Notes = append(tc.Notes, [2]int{0, n})
			}
			row.Cells = append(row.Cells, tc)
		}
		tb.Rows = append(tb.Rows, row)
	}
	p.Tables = []html.Table{tb}
	total := len(m.Releases) * len(m.Releases)
	p.Verdict = html.Verdict{Grade: html.Informational, Text: fmt.Sprintf("%d of %d pairings load; %d do not or disagree silently (notes below)", loads, total, total-loads)}
	if loads == total {
		p.Verdict.Grade = html.None
	}
	return p
}

// classGrade: a pairing that loads is plain, one whose facts were not all
// seen informational, every other incompatible.
func classGrade(c Class) html.Grade {
	switch c {
	case Loads:
		return html.None
	case Unknown, "":
		return html.Informational
	}
	return html.Incompatible
}
