package specmatch

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// NamesMatch reports whether a DWARF struct named tag (its qualified name,
// "" when anonymous), reached through the typedefs tds, is the spec struct
// st: by tag, by typedef, or by alias.
func NamesMatch(st *spec.Struct, tag string, tds []string) bool {
	names := map[string]bool{st.Name: true, st.CTag(): true, st.CTag() + "_t": true}
	for _, n := range st.Typedefs() {
		names[n] = true
	}
	if tag != "" && names[tag] {
		return true
	}
	for _, n := range tds {
		if names[n] {
			return true
		}
	}
	return false
}

// NamedAs reports whether the DWARF type d carries the name n: one of the
// typedefs on its way down, or the tag of the struct, union or enum under
// them. An opaque spec type names its pointee this way (FILE is the
// typedef of struct _IO_FILE; node_t that of struct node).
func NamedAs(d *typemodel.Type, n string) bool {
	if n == "" {
		return false
	}
	for _, td := range typemodel.Typedefs(d) {
		if td == n {
			return true
		}
	}
	s := typemodel.Strip(d)
	return s != nil && (s.Kind.Aggregate() || s.Kind == typemodel.Enum) && s.Name == n
}

// MatchType compares a DWARF member type with a spec type. It returns "" on
// a match, else why they differ. Embedded structs match by name here; their
// layouts are compared by the caller.
func MatchType(t *spec.Type, d *typemodel.Type, depth int) string {
	if depth > 8 {
		return ""
	}
	tds := typemodel.Typedefs(d)
	sd := typemodel.Strip(d)
	mismatch := func() string { return fmt.Sprintf("type %s, spec %s", typemodel.Spell(d), t.String()) }
	kind := typemodel.Void
	if sd != nil {
		kind = sd.Kind
	}
	switch t.Kind {
	case spec.KindInt, spec.KindChar:
		if kind == typemodel.Enum && t.Kind == spec.KindInt {
			// An integer the spec spells by size may be an enum in the binary.
			if typemodel.SizeOf(sd) != int64(t.Size()) {
				return mismatch()
			}
			return ""
		}
		size, signed, ok := intShape(sd)
		if ok && t.Kind == spec.KindChar && size == 1 && sd.Name == "char" {
			// Plain char is signed on x86-64 and unsigned on aarch64: the
			// spec's char is C's char, whichever its sign.
			return ""
		}
		if !ok || size != int64(t.Size()) || signed != t.Signed {
			return mismatch()
		}
	case spec.KindBool:
		if kind != typemodel.Base || sd.Encoding != typemodel.EncBoolean || typemodel.SizeOf(sd) != 1 {
			return mismatch()
		}
	case spec.KindEnum:
		// Enums compare by size; an enum whose enumerators are not documented
		// may be spelled as a plain integer of that size.
		if _, _, ok := intShape(sd); kind != typemodel.Enum && !ok {
			return mismatch()
		}
		if typemodel.SizeOf(sd) != int64(t.Size()) {
			return mismatch()
		}
	case spec.KindMutex, spec.KindSystem:
		for _, n := range tds {
			if n == t.Name {
				return ""
			}
		}
		return mismatch()
	case spec.KindVector:
		if !kind.Aggregate() || typemodel.SizeOf(sd) != 24 || !IsVector(sd.Name) {
			return mismatch()
		}
	case spec.KindStruct:
		if !kind.Aggregate() || t.Struct == nil || !NamesMatch(t.Struct, sd.Name, tds) {
			return mismatch()
		}
	case spec.KindPointer:
		if kind != typemodel.Pointer {
			return mismatch()
		}
		// An opaque or void pointee says only "some pointer".
		switch t.Elem.Base().Kind {
		case spec.KindVoid, spec.KindOpaque:
			if t.Elem.Kind != spec.KindPointer {
				return ""
			}
		}
		if why := MatchType(t.Elem, sd.Elem, depth+1); why != "" {
			return mismatch()
		}
	case spec.KindArray:
		if kind != typemodel.Array {
			return mismatch()
		}
		if t.Len < 0 {
			if sd.Count > 0 {
				return mismatch()
			}
		} else if sd.Count != int64(t.Len) {
			return mismatch()
		}
		if why := MatchType(t.Elem, sd.Elem, depth+1); why != "" {
			return mismatch()
		}
	case spec.KindVoid:
		if kind != typemodel.Void {
			return mismatch()
		}
	case spec.KindOpaque:
		return ""
	}
	return ""
}

// IsVector reports whether a DWARF struct name is std::vector<T> as the
// spec's vector type is compiled: the C++ class (its qualified name, or the
// bare name older readers gave it), or the generated header's C stand-in.
func IsVector(name string) bool {
	return strings.HasPrefix(name, "std::vector<") || strings.HasPrefix(name, "vector<") || strings.HasPrefix(name, spec.VectorPrefix)
}

// intShape classifies an integer or character base type by size and
// signedness, so that unsigned int, uint32_t and __u32 compare equal.
func intShape(t *typemodel.Type) (size int64, signed, ok bool) {
	s := typemodel.Strip(t)
	if s == nil || s.Kind != typemodel.Base || !s.Encoding.Integer() {
		return 0, false, false
	}
	return typemodel.SizeOf(s), s.Encoding.Signed(), true
}
