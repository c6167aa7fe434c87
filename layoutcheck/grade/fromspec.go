package grade

import (
	"fmt"

	"github.com/nrtabi/nrtabi/spec"
)

// FromSpec describes a spec struct in the grading model. side tells two
// specs' layouts apart in a Grader's keys ("old", "new").
func FromSpec(st *spec.Struct, side string) *Layout {
	l := &Layout{Name: st.Name, Key: side + ":" + st.Name, Size: int64(st.Size), Align: int64(st.Align()), Prefix: st.Prefix, Packed: st.Packed}
	for i := range st.Fields {
		f := &st.Fields[i]
		m := Member{Name: f.Name, Offset: int64(f.Offset), Size: int64(f.T.Size()), Type: SpecType(f.T, side)}
		l.Members = append(l.Members, m)
	}
	for _, o := range st.Opaque {
		l.Opaque = append(l.Opaque, Range{Off: int64(o.Offset), End: int64(o.End()), Covers: o.Covers})
	}
	return l
}

// SpecType describes a spec type in the grading model.
func SpecType(t *spec.Type, side string) *Type {
	out := &Type{Canon: Canon(t), Display: t.String(), Size: int64(t.Size()), Align: int64(t.Align()), Len: -1}
	switch t.Kind {
	case spec.KindInt, spec.KindBool, spec.KindChar, spec.KindEnum:
		out.Kind = TScalar
	case spec.KindVoid:
		out.Kind = TVoid
	case spec.KindPointer:
		out.Kind, out.Elem = TPointer, SpecType(t.Elem, side)
	case spec.KindArray:
		out.Kind, out.Elem, out.Len = TArray, SpecType(t.Elem, side), int64(t.Len)
	case spec.KindStruct:
		out.Kind = TStruct
		if st := t.Struct; st != nil {
			out.Struct = func() (*Layout, error) { return FromSpec(st, side), nil }
		}
	case spec.KindOpaque:
		out.Kind = TStruct // a type known only by name: undescribed
	}
	return out
}

// Canon spells a spec type for comparison: structs and enums by their spec
// name (not the alias a side happened to use), int as i32 and unsigned as
// u32, and without const/volatile, which do not change a layout.
func Canon(t *spec.Type) string {
	switch t.Kind {
	case spec.KindPointer:
		return Canon(t.Elem) + "*"
	case spec.KindArray:
		if t.Len < 0 {
			return Canon(t.Elem) + "[]"
		}
		return fmt.Sprintf("%s[%d]", Canon(t.Elem), t.Len)
	case spec.KindVector:
		return "std::vector<" + Canon(t.Elem) + ">"
	case spec.KindStruct:
		if t.Struct != nil {
			return t.Struct.Name
		}
	case spec.KindEnum:
		if t.Enum != nil {
			return t.Enum.Name
		}
	}
	switch t.Name {
	case "int":
		return "i32"
	case "unsigned":
		return "u32"
	}
	return t.Name
}
