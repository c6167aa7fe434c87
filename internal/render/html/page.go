// Package html writes a report as one self-contained HTML page: the
// verdict, every fact with its consequences under it, and a picture of each
// changed struct's bytes, old beside new (docs/nrtabi-diff.md#html-report).
// It knows no command: a report builds a Page (diff's in release/diff) and
// hands it here, so another command's page (a compatibility matrix) reuses
// the writer, its style and its checks. The page loads nothing: its style
// is inline, its pictures are boxes of the page itself, and every string
// from outside is escaped by html/template.
package html

// Grade is how much a fact matters: the class and the text label a fact
// and a box carry, so the page reads without colour.
type Grade string

// The grades, as diff and check name severities.
const (
	Incompatible  Grade = "incompatible"
	Compatible    Grade = "compatible"
	Informational Grade = "informational"
	None          Grade = "none" // no change: the verdict of an empty diff, an untouched field
)

// Page is one report.
type Page struct {
	Title   string   // the heading: what was compared
	Lines   []string // under the heading: each side, named
	Verdict Verdict
	Groups  []Group
	Layouts []Layout // the pictures the facts point to, in order
	// Tables come before the facts: a grid of verdicts (compat's matrix)
	// whose cells point to the facts that explain them.
	Tables []Table
}

// Table is a grid with a heading per column and per row; each cell a
// word with its grade and references to facts of the page.
type Table struct {
	Caption string
	Corner  string // the heading of the row headings' column
	Columns []string
	Rows    []TableRow
}

// TableRow is one row: its heading and a cell per column.
type TableRow struct {
	Head  string
	Cells []TableCell
}

// TableCell is one cell: its word, the grade that styles it, and the
// facts that explain it, as (group, fact) indices into Page.Groups.
type TableCell struct {
	Grade Grade
	Text  string
	Label string // the cell's accessible name: row, column and word
	Notes [][2]int
}

// Verdict is the report's one-line summary and its grade.
type Verdict struct {
	Grade Grade
	Text  string
}

// Group is one area of the report (diff's forward, structs, net ...).
type Group struct {
	Name  string
	Facts []Fact
}

// Fact is one change, with what it forces elsewhere under it: its
// consequences are not facts of their own (docs/nrtabi-diff.md).
type Fact struct {
	Grade   Grade
	Kind    string
	Subject string
	Change  string // old -> new, as the text report words it
	Detail  string
	// Layout names the Layout that draws the struct the fact is in ("" for
	// none).
	Layout       string
	Consequences []Fact
}

// Layout is one struct's bytes on both sides.
type Layout struct {
	Name     string
	Old, New Side
}

// Side is a struct's layout on one side. Absent: the side does not
// describe the struct.
type Side struct {
	Label   string // "old 2.31.24"
	Absent  bool
	Size    int64
	Members []Member // by offset; the gaps between them are drawn as holes and the tail as padding
}

// Member is a field or an opaque range.
type Member struct {
	Name   string
	Type   string // "" for an opaque range
	Offset int64
	Size   int64
	Opaque bool
	// Grade and Mark: the strongest fact about this member (Mark is the
	// fact's kind, field-moved ...), "" and None when nothing changed it.
	Grade Grade
	Mark  string
	Moved bool // one of a run of fields moved by the same delta
}
