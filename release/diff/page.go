package diff

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/internal/render/html"
	"github.com/nrtabi/nrtabi/spec"
)

// Page is the report as package html draws it
// (docs/nrtabi-diff.md#html-report): the verdict, every fact with its
// consequences, and for each struct a fact names, its bytes on both sides
// with the members the facts name marked by their grade. old and new are
// the specs the report was made from.
func (r Report) Page(old, new *spec.Spec) html.Page {
	p := html.Page{Title: "nrtabi diff " + r.Old.Name + " → " + r.New.Name,
		Lines:   []string{"old: " + describeSide(r.Old), "new: " + describeSide(r.New)},
		Verdict: html.Verdict{Grade: verdictGrade(r.Summary), Text: r.Verdict()}}
	marks := map[string]map[string]mark{} // struct -> member -> strongest fact
	var order []string                    // structs in the order the facts name them
	for _, g := range groupOrder {
		hg := html.Group{Name: g}
		for _, c := range r.Changes {
			if c.Group == g {
				hg.Facts = append(hg.Facts, pageFact(c, old, new, marks, &order))
			}
		}
		if hg.Facts != nil {
			p.Groups = append(p.Groups, hg)
		}
	}
	for _, st := range order {
		p.Layouts = append(p.Layouts, html.Layout{Name: st,
			Old: pageSide("old "+r.Old.Name, old.StructByName(st), marks[st], FieldAdded),
			New: pageSide("new "+r.New.Name, new.StructByName(st), marks[st], FieldRemoved)})
	}
	return p
}

type mark struct {
	sev   Severity
	kind  string
	moved bool
}

// sevRank orders the severities, the most severe highest (a switch, not a
// map built at init: docs/benchmarks.md#start-up-2026-12-04).
func sevRank(s Severity) int {
	switch s {
	case Informational:
		return 1
	case Compatible:
		return 2
	case Incompatible:
		return 3
	}
	return 0
}

func verdictGrade(s Summary) html.Grade {
	switch {
	case s.Incompatible > 0:
		return html.Incompatible
	case s.Compatible > 0:
		return html.Compatible
	case s.Informational > 0:
		return html.Informational
	}
	return html.None
}

// structOf is the struct a struct-layout change's subject names, "" for a
// change of no struct.
func structOf(c Change) string {
	if c.Group != "structs" && c.Group != "net" || c.Grade == "" && c.Kind != StructDescribed && c.Kind != StructAdded && c.Kind != StructRemoved {
		return ""
	}
	s, _, _ := strings.Cut(c.Subject, " ")
	s, _, _ = strings.Cut(s, ".")
	return s
}

func pageFact(c Change, old, new *spec.Spec, marks map[string]map[string]mark, order *[]string) html.Fact {
	f := html.Fact{Grade: html.Grade(c.Severity), Kind: c.Kind, Subject: c.Subject}
	f.Change, f.Detail = changeWords(c)
	if st := structOf(c); st != "" && (old.StructByName(st) != nil || new.StructByName(st) != nil) {
		f.Layout = st
		if marks[st] == nil {
			marks[st] = map[string]mark{}
			*order = append(*order, st)
		}
		for _, m := range members(c) {
			if x, ok := marks[st][m]; !ok || sevRank(c.Severity) > sevRank(x.sev) {
				marks[st][m] = mark{sev: c.Severity, kind: c.Kind, moved: c.Kind == FieldMoved}
			}
		}
	}
	for _, x := range c.Consequences {
		f.Consequences = append(f.Consequences, pageFact(x, old, new, marks, order))
	}
	return f
}

// members are the members of its struct a change names: a moved run's
// fields, else the one after the struct's name.
func members(c Change) []string {
	if len(c.Fields) > 0 {
		return c.Fields
	}
	_, m, ok := strings.Cut(c.Subject, ".")
	if !ok || strings.Contains(m, " ") {
		return nil
	}
	return []string{m}
}

// changeWords is the change and its detail as the text report words them
// (row), unescaped: package html escapes for its page.
func changeWords(c Change) (change, detail string) {
	change = c.Old + " -> " + c.New
	switch {
	case len(c.Fields) > 1:
		change = fmt.Sprintf("%+d", c.Delta)
	case c.Old == "":
		change = c.New
	case c.New == "":
		change = c.Old
	}
	detail = c.Detail
	if len(c.Fields) > 1 {
		detail += "; the fields: " + strings.Join(c.Fields, ", ")
	}
	if len(c.EmbeddedIn) > 0 {
		detail = strings.TrimPrefix(detail+"; embedded in "+strings.Join(c.EmbeddedIn, ", "), "; ")
	}
	return change, detail
}

// pageSide is one side of a struct's picture; a fact of kind notHere (an
// added field on the old side, a removed one on the new) marks no member
// of it.
func pageSide(label string, st *spec.Struct, marks map[string]mark, notHere string) html.Side {
	s := html.Side{Label: label}
	if st == nil {
		s.Absent = true
		return s
	}
	s.Size = int64(st.Size)
	for _, f := range st.Fields {
		size := int64(f.Size)
		if f.T != nil {
			size = int64(f.T.Size())
		}
		m := html.Member{Name: f.Name, Type: f.Type, Offset: int64(f.Offset), Size: size}
		if x, ok := marks[f.Name]; ok && x.kind != notHere {
			m.Grade, m.Mark, m.Moved = html.Grade(x.sev), x.kind, x.moved
		}
		s.Members = append(s.Members, m)
	}
	for _, o := range st.Opaque {
		name := "opaque"
		if len(o.Covers) > 0 {
			name = "opaque: " + strings.Join(o.Covers, ", ")
		}
		s.Members = append(s.Members, html.Member{Name: name, Offset: int64(o.Offset), Size: int64(o.Size), Opaque: true})
	}
	return s
}
