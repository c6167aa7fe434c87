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
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
}

// Waiver is who accepted a fact and why (docs/sarif.md#waivers): the
// one type check's findings and diff's changes carry.
type Waiver = render.Waiver

// locate gives each fact and consequence the declaration of its field,
// or of its struct when the field's line is not known. A struct whose
// file the line table does not name has no location: its facts keep
// their logical names only.
func (c *structChecker) locate(fs []Finding, dbg *elfread.Debug) {
	files := map[*typemodel.Type]string{}
	var at func(f *Finding)
	at = func(f *Finding) {
		for i := range f.Consequences {
			at(&f.Consequences[i])
		}
		t := c.decl[f.Struct]
		if t == nil || t.DeclFile == 0 && t.DeclLine == 0 {
			return
		}
		file, ok := files[t]
		if !ok {
			file, _ = dbg.DeclFile(t.Offset, t.DeclFile) // "" when the table does not name it
			files[t] = file
		}
		if file == "" {
			return
		}
		line := int(t.DeclLine)
		if m := fieldNamed(t, f.Field); m != nil && m.DeclLine > 0 {
			line = int(m.DeclLine)
		}
		f.Location = &Location{File: file, Line: line}
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
