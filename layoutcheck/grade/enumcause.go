package grade

import "github.com/nrtabi/nrtabi/spec"

// EnumSizeCause names the enum whose underlying size change a struct fact
// follows from, or "" when it follows from none: the fact is a field of st
// resized or moved, and the field's type (an array's element) is one of the
// enums in resized. An enum that grows resizes, and may realign, every field
// of its type; that is one fact, the enum's, and the field's resize and move
// are its consequences (each fact once, at its cause: docs/layoutcheck.md#enum-checks).
// check and diff both fold with it, so they count the same facts.
func EnumSizeCause(st *spec.Struct, field string, kind Kind, resized map[string]bool) string {
	if st == nil || len(resized) == 0 || kind != Resized && kind != Moved {
		return ""
	}
	for i := range st.Fields {
		f := &st.Fields[i]
		if f.Name != field {
			continue
		}
		t := f.T
		for depth := 0; t != nil && t.Kind == spec.KindArray && depth < 8; depth++ {
			t = t.Elem
		}
		if t != nil && t.Kind == spec.KindEnum && t.Enum != nil && resized[t.Enum.Name] {
			return t.Enum.Name
		}
		return ""
	}
	return ""
}

// EnumResized is the set of enums whose underlying size changed, by name,
// from graded enum changes.
func EnumResized(cs []EnumChange) map[string]bool {
	out := map[string]bool{}
	for _, c := range cs {
		if c.Kind == EnumKindSize {
			out[c.Enum] = true
		}
	}
	return out
}
