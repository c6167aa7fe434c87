package html

import (
	"fmt"
	"sort"
	"strconv"
)

// BytesPerRow is how many bytes one row of a picture draws: each box's
// width is its bytes over BytesPerRow of the row, so boxes of one picture
// are to one scale (the browser test holds them to it).
const BytesPerRow = 32

// maxRows bounds the rows one picture draws; past it the picture says how
// many rows it left out. Runs of rows that lie inside one member on both
// sides are one elided row and do not count.
const maxRows = 512

// elideMin: a run of rows inside one member shorter than this is drawn.
const elideMin = 2

type view struct {
	Page
	Groups      []viewGroup
	Pictures    []picture
	Tables      []viewTable
	Count       int // facts and consequences, for the page's own summary
	BytesPerRow int
	Legend      []box
}

type viewTable struct {
	ID      string
	Caption string
	Corner  string
	Columns []string
	Rows    []viewRow
}

type viewRow struct {
	Head  string
	Cells []viewCell
}

type viewCell struct {
	Grade Grade
	Text  string
	Label string
	Notes []viewNote
}

// viewNote is a cell's link to a fact: its number on the page (the fact's
// place in its group, as the text matrix numbers its notes) and its name.
type viewNote struct {
	ID, N, Label string
	RefID        string // the link's own id: Tab reaches each (the browser test)
}

type viewGroup struct {
	Name  string
	Facts []viewFact
}

type viewFact struct {
	ID      string
	Depth   int
	Grade   Grade
	Kind    string
	Subject string
	Change  string
	Detail  string
	Label   string // the accessible name: the row's text in one line
	Layout  string // the picture's id, "" for none
	LName   string
	Cons    []viewFact
}

type picture struct {
	ID, Name string
	Old, New sideHead
	Rows     []row
	Dropped  int // rows past maxRows
}

type sideHead struct {
	Label  string
	Absent bool
	Size   int64
}

type row struct {
	Offset   int64
	Elided   bool
	Old, New lane
}

type lane struct {
	Label string // the lane's accessible description: side and bytes
	Boxes []box
	Note  string // an elided run, an absent side, bytes past the struct's end
}

type box struct {
	Class string
	Width float64 // percent of the row
	Bytes int64
	Text  string // what the box shows (clipped by the style)
	Name  string // its accessible name: every fact about it in words
}

// item is a member, a hole or the tail padding of one side.
type item struct {
	Member
	kind string // field, opaque, hole, pad
}

func build(p Page) view {
	p.Verdict.Grade = orNone(p.Verdict.Grade)
	v := view{Page: p, Legend: legend(), BytesPerRow: BytesPerRow}
	for gi, g := range p.Groups {
		vg := viewGroup{Name: g.Name}
		for fi, f := range g.Facts {
			vg.Facts = append(vg.Facts, v.fact(f, fmt.Sprintf("fact-%d-%d", gi+1, fi+1), 0, p.Layouts))
		}
		v.Groups = append(v.Groups, vg)
	}
	for i, l := range p.Layouts {
		v.Pictures = append(v.Pictures, draw(l, layoutID(i)))
	}
	for ti, tb := range p.Tables {
		vt := viewTable{ID: "table-" + strconv.Itoa(ti+1), Caption: tb.Caption, Corner: tb.Corner, Columns: tb.Columns}
		for ri, r := range tb.Rows {
			vr := viewRow{Head: r.Head}
			for ci, c := range r.Cells {
				vc := viewCell{Grade: orNone(c.Grade), Text: c.Text, Label: c.Label}
				for ni, n := range c.Notes {
					// A reference to no fact of the page is dropped, not
					// drawn as a link to nowhere (the page test counts
					// every cell's notes against the model's).
					if n[0] < 0 || n[0] >= len(v.Groups) || n[1] < 0 || n[1] >= len(v.Groups[n[0]].Facts) {
						continue
					}
					f := v.Groups[n[0]].Facts[n[1]]
					vc.Notes = append(vc.Notes, viewNote{ID: f.ID, N: strconv.Itoa(n[1] + 1), Label: f.Label,
						RefID: fmt.Sprintf("%s-r%d-c%d-n%d", vt.ID, ri+1, ci+1, ni+1)})
				}
				vr.Cells = append(vr.Cells, vc)
			}
			vt.Rows = append(vt.Rows, vr)
		}
		v.Tables = append(v.Tables, vt)
	}
	return v
}

func layoutID(i int) string { return "layout-" + strconv.Itoa(i+1) }

func (v *view) fact(f Fact, id string, depth int, layouts []Layout) viewFact {
	v.Count++
	vf := viewFact{ID: id, Depth: depth, Grade: orNone(f.Grade), Kind: f.Kind, Subject: f.Subject, Change: f.Change, Detail: f.Detail}
	vf.Label = string(vf.Grade) + " " + f.Kind + " " + f.Subject
	if f.Change != "" {
		vf.Label += ": " + f.Change
	}
	if f.Detail != "" {
		vf.Label += " (" + f.Detail + ")"
	}
	if depth > 0 {
		vf.Label = "consequence: " + vf.Label
	}
	for i, l := range layouts {
		if l.Name == f.Layout && f.Layout != "" {
			vf.Layout, vf.LName = layoutID(i), l.Name
			break
		}
	}
	for i, c := range f.Consequences {
		vf.Cons = append(vf.Cons, v.fact(c, id+"-"+strconv.Itoa(i+1), depth+1, layouts))
	}
	return vf
}

// orNone is g if it is one of the grades, else None: a grade names a
// class of the style, never a string from outside.
func orNone(g Grade) Grade {
	switch g {
	case Incompatible, Compatible, Informational:
		return g
	}
	return None
}

// items lays out one side: its members by offset, the gaps between them as
// holes and the bytes after the last as padding. A member that overlaps
// the one before it (a union's, a bitfield's) is drawn from where the one
// before ends; one wholly under it is not drawn, and its box's name says so
// of the one that covers it.
func items(s Side) []item {
	ms := append([]Member(nil), s.Members...)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Offset < ms[j].Offset })
	var out []item
	var at int64
	for _, m := range ms {
		end := m.Offset + m.Size
		if m.Size <= 0 || end <= at || m.Offset >= s.Size {
			continue
		}
		if end > s.Size {
			end = s.Size
		}
		if m.Offset > at {
			out = append(out, item{Member: Member{Name: "hole", Offset: at, Size: m.Offset - at}, kind: "hole"})
		}
		k := "field"
		if m.Opaque {
			k = "opaque"
		}
		if m.Offset < at {
			m.Size, m.Offset = end-at, at
		} else {
			m.Size = end - m.Offset
		}
		out = append(out, item{Member: m, kind: k})
		at = end
	}
	if at < s.Size {
		out = append(out, item{Member: Member{Name: "padding", Offset: at, Size: s.Size - at}, kind: "pad"})
	}
	return out
}

// interior: row [r, r+BytesPerRow) lies inside one item and holds neither
// its start nor its end, or the side has no bytes there.
func interior(its []item, size int64, absent bool, r int64) (bool, *item) {
	if absent || r >= size {
		return true, nil
	}
	i := sort.Search(len(its), func(i int) bool { return its[i].Offset+its[i].Size > r })
	if i == len(its) {
		return true, nil
	}
	it := &its[i]
	return it.Offset < r && r+BytesPerRow < it.Offset+it.Size, it
}

func draw(l Layout, id string) picture {
	p := picture{ID: id, Name: l.Name,
		Old: sideHead{Label: l.Old.Label, Absent: l.Old.Absent, Size: l.Old.Size},
		New: sideHead{Label: l.New.Label, Absent: l.New.Absent, Size: l.New.Size}}
	oi, ni := items(l.Old), items(l.New)
	size := max(sizeOf(l.Old), sizeOf(l.New))
	nrows := (size + BytesPerRow - 1) / BytesPerRow
	for k := int64(0); k < nrows; {
		r := k * BytesPerRow
		run := int64(0)
		var oit, nit *item
		for k+run < nrows {
			oe, o := interior(oi, l.Old.Size, l.Old.Absent, (k+run)*BytesPerRow)
			ne, n := interior(ni, l.New.Size, l.New.Absent, (k+run)*BytesPerRow)
			if !oe || !ne {
				break
			}
			if run == 0 {
				oit, nit = o, n
			}
			run++
		}
		if run >= elideMin {
			p.Rows = append(p.Rows, row{Offset: r, Elided: true,
				Old: lane{Note: elidedNote(oit, run, l.Old)}, New: lane{Note: elidedNote(nit, run, l.New)}})
			k += run
			continue
		}
		if len(p.Rows) >= maxRows {
			p.Dropped = int(nrows - k)
			break
		}
		p.Rows = append(p.Rows, row{Offset: r,
			Old: fill(oi, l.Old, r, "old"), New: fill(ni, l.New, r, "new")})
		k++
	}
	return p
}

func sizeOf(s Side) int64 {
	if s.Absent {
		return 0
	}
	return s.Size
}

func elidedNote(it *item, run int64, s Side) string {
	switch {
	case s.Absent:
		return "not described on this side"
	case it == nil:
		return "past the end of the struct"
	}
	return fmt.Sprintf("%s continues: %d rows (%d bytes) inside it not drawn", it.Name, run, run*BytesPerRow)
}

// fill is the boxes of one side's row [r, r+BytesPerRow).
func fill(its []item, s Side, r int64, which string) lane {
	end := r + BytesPerRow
	ln := lane{Label: fmt.Sprintf("%s bytes %d to %d", which, r, end-1)}
	switch {
	case s.Absent:
		ln.Note = "not described on this side"
		return ln
	case r >= s.Size:
		ln.Note = "past the end of the struct"
		return ln
	}
	i := sort.Search(len(its), func(i int) bool { return its[i].Offset+its[i].Size > r })
	for ; i < len(its) && its[i].Offset < end; i++ {
		it := its[i]
		a, e := max(it.Offset, r), min(it.Offset+it.Size, end)
		ln.Boxes = append(ln.Boxes, boxOf(it, a, e, which))
	}
	return ln
}

func boxOf(it item, a, e int64, which string) box {
	b := box{Bytes: e - a, Width: float64(e-a) * 100 / BytesPerRow}
	b.Class = "box " + it.kind
	g := orNone(it.Grade)
	mark := ""
	if it.kind == "field" || it.kind == "opaque" {
		b.Class += " g-" + string(g)
		if it.Moved {
			b.Class += " moved"
			mark = "→"
		}
		if it.Mark != "" && !it.Moved {
			mark = "!"
		}
	}
	b.Text = mark + it.Name
	if it.kind == "hole" || it.kind == "pad" {
		b.Text = it.Name
	}
	b.Name = fmt.Sprintf("%s %s %s, bytes %d to %d (%d bytes)", which, it.kind, it.Name, it.Offset, it.Offset+it.Size-1, it.Size)
	if it.Type != "" {
		b.Name += ", " + it.Type
	}
	if it.Mark != "" {
		b.Name += ", " + it.Mark + " (" + string(g) + ")"
	}
	if a != it.Offset || e != it.Offset+it.Size {
		b.Name += fmt.Sprintf(", this row holds bytes %d to %d", a, e-1)
	}
	return b
}

// legend is one sample box of each kind, each saying in words what its
// pattern means.
func legend() []box {
	mk := func(class, text, name string) box {
		return box{Class: "box " + class, Width: 100, Bytes: 0, Text: text, Name: name}
	}
	return []box{
		mk("field g-none", "field", "unchanged field: plain, thin solid border"),
		mk("field g-incompatible", "!field", "field an incompatible fact names: diagonal hatching, thick solid border, ! before its name"),
		mk("field g-compatible", "!field", "field a compatible fact names: vertical stripes, dashed border, ! before its name"),
		mk("field g-informational", "!field", "field an informational fact names: dots, dotted border, ! before its name"),
		mk("field g-incompatible moved", "→field", "field of a moved run: → before its name, double underline"),
		mk("opaque g-none", "opaque", "opaque range: horizontal lines"),
		mk("hole", "hole", "hole between fields: light back-diagonal hatching, the word hole"),
		mk("pad", "padding", "padding after the last field: cross-hatching, the word padding"),
	}
}
