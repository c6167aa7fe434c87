package layoutcheck

import (
	"strings"

	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/typemodel"
)

// Location is a file and line: where the DWARF says a struct or a field
// is declared (DW_AT_decl_file through the unit's line table, and
// DW_AT_decl_line), for the physical location of a SARIF result
// (docs/sarif.md#locations). For --headers, the file is the header under
// the directory named.
type Location struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Unresolved says why the DWARF's decl_file could not be named (a
	// line table cut off, an index past it, a split unit): the fact keeps
	// its line and logical names, and the reason is stated, not dropped.
	Unresolved string `json:"unresolved,omitempty"`
}

// Waiver is who accepted a fact and why (docs/sarif.md#waivers): the
// one type check's findings and diff's changes carry.
type Waiver = render.Waiver

// locate gives each fact and consequence the declaration of its field,
// or of its struct when the field's line is not known. A struct the DWARF
// gives no decl_file or decl_line has no location; one whose file the
// line table does not name keeps its line and says why (Unresolved).
func (c *structChecker) locate(fs []Finding, dbg *elfread.Debug) {
	type decl struct{ file, why string }
	files := map[*typemodel.Type]decl{}
	var at func(f *Finding)
	at = func(f *Finding) {
		for i := range f.Consequences {
			at(&f.Consequences[i])
		}
		t := c.decl[f.Struct]
		if t == nil || t.DeclFile == 0 && t.DeclLine == 0 {
			return
		}
		d, ok := files[t]
		if !ok {
			file, err := dbg.DeclFile(t.Offset, t.DeclFile)
			d = decl{file: file}
			if err != nil {
				d.why = err.Error()
			}
			files[t] = d
		}
		line := int(t.DeclLine)
		if m := fieldNamed(t, f.Field); m != nil && m.DeclLine > 0 {
			line = int(m.DeclLine)
		}
		f.Location = &Location{File: d.file, Line: line, Unresolved: d.why}
	}
	for i := range fs {
		at(&fs[i])
	}
}

// fieldNamed is the member of t a finding's field names: the first of a
// moved run ("a .. z"), the first step of a path ("a.b", "a[2]").
func fieldNamed(t *typemodel.Type, field string) *typemodel.Field {
	name, _, _ := strings.Cut(field, " .. ")
	if i := strings.IndexAny(name, ".["); i >= 0 {
		name = name[:i]
	}
	if name == "" {
		return nil
	}
	for i := range t.Fields {
		if t.Fields[i].Name == name {
			return &t.Fields[i]
		}
	}
	return nil
}
