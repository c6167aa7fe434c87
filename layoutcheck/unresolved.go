package layoutcheck

import (
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

// maxUnresolved bounds how many unresolved declarations one layout lists.
const maxUnresolved = 64

// unresolvedDecls lists the declarations l holds by value (through arrays,
// typedefs, qualifiers and nested aggregates, never behind a pointer)
// that g left unresolved, in member order; the walk is bounded by
// typemodel.MaxDepth and maxUnresolved.
func unresolvedDecls(g *elfread.Types, l *typemodel.Type) []UnresolvedDecl {
	var out []UnresolvedDecl
	var walk func(t *typemodel.Type, path string, depth int)
	walk = func(t *typemodel.Type, path string, depth int) {
		for ; depth < typemodel.MaxDepth && len(out) < maxUnresolved; depth++ {
			t = typemodel.Strip(t)
			if t == nil || t.Kind != typemodel.Array {
				break
			}
			t, path = t.Elem, path+"[]"
		}
		if t == nil || !t.Kind.Aggregate() || depth >= typemodel.MaxDepth || len(out) >= maxUnresolved {
			return
		}
		if t.Declaration {
			if why := g.Unresolved(t); why != "" {
				out = append(out, UnresolvedDecl{Member: path, Type: typemodel.Spell(t), Why: why})
			}
			return
		}
		for i := range t.Fields {
			f := &t.Fields[i]
			p := f.Label()
			if path != "" {
				p = path + "." + p
			}
			walk(f.Type, p, depth+1)
		}
	}
	walk(l, "", 0)
	return out
}
