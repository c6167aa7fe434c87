package specmatch

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// NameRank is how a DWARF struct named tag (its qualified name, "" when
// anonymous), reached through the typedefs
// tds, carries the names of the spec struct st: 0 by a name of its own
// (st's name, its tag, a typedef it declares), 1 only by the TAG_t alias,
// -1 not at all. A name of its own wins over an alias wherever the two
// meet (StructNamed, Debug.FindStructs): ld.so's struct list beside the
// typedef list_t of its struct list_head
// (docs/nrtabi-check.md#how-a-spec-struct-is-found).
func NameRank(st *spec.Struct, tag string, tds []string) int {
	own := func(n string) bool {
		if n == st.Name || n == st.CTag() {
			return true
		}
		for _, td := range st.Typedefs() {
			if n == td {
				return true
			}
		}
		return false
	}
	if tag != "" && own(tag) {
		return 0
	}
	for _, n := range tds {
		if own(n) {
			return 0
		}
	}
	alias := st.CTag() + "_t"
	if tag == alias {
		return 1
	}
	for _, n := range tds {
		if n == alias {
			return 1
		}
	}
	return -1
}

// IsStruct reports whether a member's DWARF struct named tag, reached
// through the typedefs tds, is the spec struct st a member type names: by
// a name of its own, or by the TAG_t alias when its tag says nothing else
// (anonymous, or the alias itself). A member retyped from struct list * to
// list_t *, the typedef of a struct list_head, has changed type, though
// list_t is the spec struct list's alias.
func IsStruct(st *spec.Struct, tag string, tds []string) bool {
	switch NameRank(st, tag, tds) {
	case 0:
		return true
	case 1:
		return tag == "" || tag == st.CTag()+"_t"
	}
	return false
}

// StructNamed is the spec struct a DWARF struct named tag, reached through
// the typedefs tds, is: the first of structs it carries the own names of,
// else the first it carries by alias (NameRank); nil when none.
func StructNamed(structs []*spec.Struct, tag string, tds []string) *spec.Struct {
	var alias *spec.Struct
	for _, st := range structs {
		switch NameRank(st, tag, tds) {
		case 0:
			return st
		case 1:
			if alias == nil {
				alias = st
			}
		}
	}
	return alias
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

// Found is where each spec struct was found in the DWARF being checked:
// the offset of its struct DIE (typemodel.Type.Offset). A member type that
// reaches that very DIE is that spec struct, whatever typedef it goes
// through (gsl's traverser reaches the struct found as rb_table through the
// typedef gsl_bst_rb_table of the same unit); elsewhere names decide
// (IsStruct). A nil Found is names alone.
type Found map[*spec.Struct]uint64

// Is reports whether the struct d is the DIE st was found at.
func (f Found) Is(st *spec.Struct, d *typemodel.Type) bool {
	if f == nil || st == nil || d == nil || d.Offset == 0 {
		return false
	}
	off, ok := f[st]
	return ok && off == d.Offset
}

// StructIs reports whether the DWARF type d (through its typedefs and
// qualifiers) is the spec struct st: the DIE st was found at, or by st's
// names (IsStruct; the tag is that of the struct, union or enum under d).
func (f Found) StructIs(st *spec.Struct, d *typemodel.Type) bool {
	s := typemodel.Strip(d)
	tag := ""
	if s != nil && (s.Kind.Aggregate() || s.Kind == typemodel.Enum) {
		tag = s.Name
	}
	return IsStruct(st, tag, typemodel.Typedefs(d)) || f.Is(st, s)
}

// MatchType compares a DWARF member type with a spec type. It returns "" on
// a match, else why they differ. Embedded structs match by name here; their
// layouts are compared by the caller.
func MatchType(t *spec.Type, d *typemodel.Type, depth int) string {
	return Found(nil).MatchType(t, d, depth)
}

// MatchType is MatchType that takes a struct DIE where f says its spec
// struct was found for that struct.
func (f Found) MatchType(t *spec.Type, d *typemodel.Type, depth int) string {
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
		if !kind.Aggregate() || t.Struct == nil || !f.StructIs(t.Struct, d) {
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
		if why := f.MatchType(t.Elem, sd.Elem, depth+1); why != "" {
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
		if why := f.MatchType(t.Elem, sd.Elem, depth+1); why != "" {
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
