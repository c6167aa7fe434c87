package diff

import (
	"fmt"

	"github.com/nrtabi/nrtabi/spec"
)

// The retypes graded by layout, as nrtabi check grades them: a flexible
// array's new element type when the struct's size and alignment and the
// array's offset are unchanged, and a type renamed with an identical
// layout, recursively. Every other retype stays incompatible.

// gradedRetype returns the kind and detail of a compatible retype of of
// (in o) to nf (in n), or "" when the retype is incompatible.
func gradedRetype(o, n *spec.Struct, of, nf *spec.Field) (kind, detail string) {
	if of.T.Kind == spec.KindArray && nf.T.Kind == spec.KindArray && of.T.Len < 0 && nf.T.Len < 0 {
		if of.Offset == nf.Offset && o.Size == n.Size && o.Align() == n.Align() {
			return FieldFlexElem, fmt.Sprintf("a flexible array: offset %d, struct size %d and alignment %d unchanged", nf.Offset, n.Size, n.Align())
		}
		return "", ""
	}
	if sameLayout(of.T, nf.T, 0) {
		return FieldTypeRenamed, fmt.Sprintf("identical layout: %d B, the same members at the same offsets", nf.T.Size())
	}
	return "", ""
}

// sameLayout reports whether two spec types lay out identically:
// structs member by member, arrays and pointers by their elements.
func sameLayout(a, b *spec.Type, depth int) bool {
	if depth > 8 || a.Kind != b.Kind || a.Size() != b.Size() || a.Align() != b.Align() {
		return false
	}
	switch a.Kind {
	case spec.KindArray:
		return a.Len == b.Len && (canon(a.Elem) == canon(b.Elem) || sameLayout(a.Elem, b.Elem, depth+1))
	case spec.KindPointer:
		return canon(a.Elem) == canon(b.Elem) || sameLayout(a.Elem, b.Elem, depth+1)
	case spec.KindStruct:
		// Every old field is at the same offset with the same layout; a new
		// field may only describe bytes the old struct left opaque (as
		// field-added-in-opaque grades it), and the new struct may leave
		// opaque only bytes the old one did.
		x, y := a.Struct, b.Struct
		if x == nil || y == nil || x.Size != y.Size || x.Packed != y.Packed {
			return false
		}
		matched := map[string]bool{}
		for i := range x.Fields {
			f := &x.Fields[i]
			ok := false
			for j := range y.Fields {
				g := &y.Fields[j]
				if !matched[g.Name] && g.Offset == f.Offset && (canon(f.T) == canon(g.T) || sameLayout(f.T, g.T, depth+1)) {
					matched[g.Name], ok = true, true
					break
				}
			}
			if !ok {
				return false
			}
		}
		for j := range y.Fields {
			if g := &y.Fields[j]; !matched[g.Name] && !insideOpaque(x, g.Offset, g.T.Size()) {
				return false
			}
		}
		for _, op := range y.Opaque {
			if !insideOpaque(x, op.Offset, op.Size) {
				return false
			}
		}
		return true
	}
	return false
}
