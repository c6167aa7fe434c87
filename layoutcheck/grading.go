package layoutcheck

import (
	"debug/dwarf"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/spec"
)

// The two retypes graded by layout rather than by name. Both keep every
// byte a caller of either side reads or writes where it was, so a binary
// built for one side works with the other; every other retype stays
// incompatible.
//
//   - A flexible array member whose element type changed: it adds no size,
//     and if its offset and the struct's alignment are unchanged, neither is
//     the struct's size nor the position of anything in it.
//   - A member whose type has another name but an identical layout,
//     recursively (same size, alignment, and members of the same types at the
//     same offsets): a type rename, as abidiff calls it.

type layoutPair struct {
	st  *spec.Struct
	off dwarf.Offset
}

// graded reports a retyped member as a compatible change when one of the
// two rules above holds, and says whether it did.
func (c *structCheck) graded(l *elfread.Layout, f *spec.Field, m *elfread.Member, fp, root string, depth int) bool {
	if flexible(f.T, m.Type) {
		before, after := flexAligns(l, f, m)
		if m.Offset != int64(f.Offset) || before != after {
			return false
		}
		c.add(Compatible, KindFlexElem, root, fieldPath(fp), f.T.String(), elfread.TypeName(m.Type),
			"%s: flexible array of %s, spec %s (same offset %d; the struct's size and %d-byte alignment are unchanged)",
			fp, elfread.TypeName(elfread.Strip(m.Type).(*godwarf.ArrayType).Type), f.T.Elem, m.Offset, after)
		return true
	}
	inner, ok := c.sameLayout(f.T, m.Type, fp, depth)
	if !ok {
		return false
	}
	why := fmt.Sprintf("identical layout: %d B, same members at the same offsets", m.Size)
	if f.T.Kind == spec.KindPointer {
		why = "the pointee's layout is identical"
	}
	c.add(Compatible, KindTypeRenamed, root, fieldPath(fp), f.T.String(), elfread.TypeName(m.Type),
		"%s: type renamed %s -> %s (%s)", fp, f.T, elfread.TypeName(m.Type), why)
	c.out = append(c.out, inner...)
	return true
}

// flexible reports whether both the spec type and the DWARF type are
// flexible arrays.
func flexible(t *spec.Type, d godwarf.Type) bool {
	a, ok := elfread.Strip(d).(*godwarf.ArrayType)
	return ok && t.Kind == spec.KindArray && t.Len < 0 && a.Count <= 0
}

// flexAligns is the struct's alignment with the spec's element type and
// with the binary's, every other member as the DWARF has it.
func flexAligns(l *elfread.Layout, f *spec.Field, m *elfread.Member) (before, after int64) {
	others := int64(1)
	for _, o := range l.Members {
		if o != m && !o.Virtual {
			others = max(others, elfread.TypeAlign(o.Type))
		}
	}
	return max(others, int64(f.T.Align())), max(others, elfread.TypeAlign(m.Type))
}

// flexAlignNote explains why a flexible array's new element is not
// compatible, for the retype message.
func (c *structCheck) flexAlignNote(l *elfread.Layout, f *spec.Field, m *elfread.Member) string {
	if !flexible(f.T, m.Type) {
		return ""
	}
	if before, after := flexAligns(l, f, m); before != after {
		return fmt.Sprintf("; the flexible array changes the struct's alignment from %d to %d bytes", before, after)
	}
	return ""
}

// sameLayout reports whether the DWARF type d lays out exactly like the
// spec type t although their names differ: a struct (compared member by
// member, recursively), an array of such structs, or a pointer to one. It
// returns the findings inside an embedded struct that do not break the
// layout (renamed fields, say), to report with the rename.
func (c *structCheck) sameLayout(t *spec.Type, d godwarf.Type, fp string, depth int) ([]Finding, bool) {
	if depth >= 8 {
		return nil, false
	}
	sd := elfread.Strip(d)
	switch t.Kind {
	case spec.KindArray:
		a, ok := sd.(*godwarf.ArrayType)
		if !ok || (t.Len < 0) != (a.Count <= 0) || t.Len >= 0 && a.Count != int64(t.Len) {
			return nil, false
		}
		if specmatch.MatchType(t.Elem, a.Type, 0) == "" {
			return nil, true
		}
		return c.sameLayout(t.Elem, a.Type, fp+"[]", depth+1)
	case spec.KindPointer:
		p, ok := sd.(*godwarf.PtrType)
		if !ok {
			return nil, false
		}
		if specmatch.MatchType(t.Elem, p.Type, 0) == "" {
			return nil, true
		}
		// What a pointee holds is not in this struct's bytes: only whether
		// it is the same layout matters here.
		_, same := c.sameLayout(t.Elem, p.Type, fp+"->", depth+1)
		return nil, same
	case spec.KindStruct:
		st, ok := sd.(*godwarf.StructType)
		if !ok || t.Struct == nil || st.Kind == "union" {
			return nil, false
		}
		off := c.r.GlobalOffset(st)
		key := layoutPair{t.Struct, off}
		if c.assumed[key] {
			return nil, true // already being compared further up: assume equal, the outer comparison decides
		}
		inner, err := c.r.Layout(off)
		if err != nil || inner.Size != int64(t.Struct.Size) || inner.Align != int64(t.Struct.Align()) && !t.Struct.Packed {
			return nil, false
		}
		if c.assumed == nil {
			c.assumed = map[layoutPair]bool{}
		}
		c.assumed[key] = true
		defer delete(c.assumed, key)
		sub := &structCheck{r: c.r, assumed: c.assumed}
		sub.check(t.Struct, inner, fp, depth+1)
		for _, fd := range sub.out {
			if fd.Severity == Incompatible || fd.Kind == KindAdded {
				return nil, false // a member the spec does not know is not an identical layout
			}
		}
		return sub.out, true
	}
	return nil, false
}
