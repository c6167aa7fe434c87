package layoutcheck

import (
	"fmt"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/typemodel"
)

// UnresolvedDecl is a struct, class or union a layout holds by value that
// stayed a declaration: the DWARF declares it where the layout uses it and
// its definitions elsewhere could not be taken (two of differing sizes, a
// One Definition Rule clash nothing here may settle; the comment of
// readers/elfread/typedecl.go). Its size, and so the layout around it,
// is not known.
type UnresolvedDecl struct {
	Member string `json:"member"` // the member path holding it ("a.b", "a[]")
	Type   string `json:"type"`   // its spelling ("struct init")
	Why    string `json:"why"`
}

// maxUnresolved bounds how many unresolved declarations one layout lists,
// and maxDeclVisits the aggregates the walk enters (a second bound beside
// the memo of clean types).
const (
	maxUnresolved = 64
	maxDeclVisits = 1 << 16
)

// unresolvedDecls lists the declarations l holds by value (through arrays,
// typedefs, qualifiers and nested aggregates, never behind a pointer)
// that g left unresolved, in member order. The walk is bounded: depth by
// typemodel.MaxDepth, the list by maxUnresolved, and the work by a type
// found clean once being skipped after (a hostile DWARF can share one
// struct under many members at every level, which would otherwise be
// walked once per path).
func unresolvedDecls(g *elfread.Types, l *typemodel.Type) []UnresolvedDecl {
	w := declWalk{g: g, clean: map[*typemodel.Type]bool{}}
	w.walk(l, "", 0)
	if w.cut {
		// Never a short list passed off as the whole one.
		w.out = append(w.out, UnresolvedDecl{Member: "...", Why: fmt.Sprintf("the list stops here: the walk's bounds (%d declarations, %d aggregates entered, %d levels) were reached", maxUnresolved, maxDeclVisits, typemodel.MaxDepth)})
	}
	return w.out
}

type declWalk struct {
	g      *elfread.Types
	clean  map[*typemodel.Type]bool // aggregates with nothing unresolved under them
	out    []UnresolvedDecl
	visits int  // aggregates entered, for the test of the bound
	cut    bool // a bound stopped the walk before it was done
}

// walk reports whether it listed anything under t.
func (w *declWalk) walk(t *typemodel.Type, path string, depth int) bool {
	for ; depth < typemodel.MaxDepth; depth++ {
		t = typemodel.Strip(t)
		if t == nil || t.Kind != typemodel.Array {
			break
		}
		t, path = t.Elem, path+"[]"
	}
	if t == nil || !t.Kind.Aggregate() || w.clean[t] {
		return false
	}
	if depth >= typemodel.MaxDepth || len(w.out) >= maxUnresolved || w.visits >= maxDeclVisits {
		w.cut = true
		return false
	}
	w.visits++
	if t.Declaration {
		why := w.g.Unresolved(t)
		if why == "" {
			w.clean[t] = true
			return false
		}
		w.out = append(w.out, UnresolvedDecl{Member: path, Type: typemodel.Spell(t), Why: why})
		return true
	}
	found := false
	for i := range t.Fields {
		f := &t.Fields[i]
		p := f.Label()
		if path != "" {
			p = path + "." + p
		}
		if w.walk(f.Type, p, depth+1) {
			found = true
		}
	}
	if !found && len(w.out) < maxUnresolved {
		w.clean[t] = true
	}
	return found
}
