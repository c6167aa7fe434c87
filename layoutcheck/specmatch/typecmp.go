package specmatch

import (
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// TypedefNames lists the typedef names met while stripping t, outermost first.
func TypedefNames(t godwarf.Type) []string {
	var out []string
	for range 64 {
		switch x := t.(type) {
		case *godwarf.TypedefType:
			out = append(out, x.Name)
			t = x.Type
		case *godwarf.QualType:
			t = x.Type
		default:
			return out
		}
	}
	return out
}

// IntShape classifies an integer-like DWARF type by size and signedness, so
// that unsigned int, uint32_t and __u32 compare equal.
func IntShape(t godwarf.Type) (size int64, signed, ok bool) {
	switch x := t.(type) {
	case *godwarf.IntType:
		return x.ByteSize, true, true
	case *godwarf.UintType:
		return x.ByteSize, false, true
	case *godwarf.CharType:
		return x.ByteSize, true, true
	case *godwarf.UcharType:
		return x.ByteSize, false, true
	}
	return 0, false, false
}

// StructNamesMatch reports whether a DWARF struct (reached through the
// typedefs tds) is the spec struct st: by tag, by typedef, or by alias.
func StructNamesMatch(st *spec.Struct, d *godwarf.StructType, tds []string) bool {
	names := map[string]bool{st.Name: true, st.CTag(): true, st.CTag() + "_t": true}
	for _, n := range st.Typedefs() {
		names[n] = true
	}
	if d.StructName != "" && names[d.StructName] {
		return true
	}
	for _, n := range tds {
		if names[n] {
			return true
		}
	}
	return false
}

// MatchType compares a DWARF member type with a spec type. It returns "" on
// a match, else why they differ. Embedded structs match by name here; their
// layouts are compared by the caller.
func MatchType(t *spec.Type, d godwarf.Type, depth int) string {
	if depth > 8 {
		return ""
	}
	tds := TypedefNames(d)
	sd := elfread.Strip(d)
	dn := elfread.TypeName(d)
	want := t.String()
	mismatch := func() string { return fmt.Sprintf("type %s, spec %s", dn, want) }
	switch t.Kind {
	case spec.KindInt, spec.KindChar:
		if e, ok := sd.(*godwarf.EnumType); ok && t.Kind == spec.KindInt {
			// An integer the spec spells by size may be an enum in the binary.
			if e.Size() != int64(t.Size()) {
				return mismatch()
			}
			return ""
		}
		size, signed, ok := IntShape(sd)
		if ok && t.Kind == spec.KindChar && size == 1 && sd.Common().Name == "char" {
			// Plain char is signed on x86-64 and unsigned on aarch64: the
			// spec's char is C's char, whichever its sign.
			return ""
		}
		if !ok || size != int64(t.Size()) || signed != t.Signed {
			return mismatch()
		}
	case spec.KindBool:
		if _, ok := sd.(*godwarf.BoolType); !ok || sd.Size() != 1 {
			return mismatch()
		}
	case spec.KindEnum:
		// Enums compare by size; an enum whose enumerators are not documented
		// may be spelled as a plain integer of that size.
		switch sd.(type) {
		case *godwarf.EnumType:
		default:
			if _, _, ok := IntShape(sd); !ok {
				return mismatch()
			}
		}
		if sd.Size() != int64(t.Size()) {
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
		st, ok := sd.(*godwarf.StructType)
		if !ok || st.Size() != 24 || !(strings.HasPrefix(st.StructName, "vector<") || strings.HasPrefix(st.StructName, "nrtabi_vector_")) {
			return mismatch()
		}
	case spec.KindStruct:
		st, ok := sd.(*godwarf.StructType)
		if !ok || t.Struct == nil || !StructNamesMatch(t.Struct, st, tds) {
			return mismatch()
		}
	case spec.KindPointer:
		p, ok := sd.(*godwarf.PtrType)
		if !ok {
			return mismatch()
		}
		// An opaque or void pointee says only "some pointer".
		switch t.Elem.Base().Kind {
		case spec.KindVoid, spec.KindOpaque:
			if t.Elem.Kind != spec.KindPointer {
				return ""
			}
		}
		if why := MatchType(t.Elem, p.Type, depth+1); why != "" {
			return mismatch()
		}
	case spec.KindArray:
		a, ok := sd.(*godwarf.ArrayType)
		if !ok {
			return mismatch()
		}
		if t.Len < 0 {
			if a.Count > 0 {
				return mismatch()
			}
		} else if a.Count != int64(t.Len) {
			return mismatch()
		}
		if why := MatchType(t.Elem, a.Type, depth+1); why != "" {
			return mismatch()
		}
	case spec.KindVoid:
		if _, ok := sd.(*godwarf.VoidType); !ok && sd != nil {
			return mismatch()
		}
	case spec.KindOpaque:
		return ""
	}
	return ""
}

// EmptyClass reports a class with no data (size 1, no members): an empty
// base takes no storage.
func EmptyClass(t godwarf.Type) bool {
	st, ok := elfread.Strip(t).(*godwarf.StructType)
	return ok && st.Size() <= 1 && len(st.Field) == 0
}
