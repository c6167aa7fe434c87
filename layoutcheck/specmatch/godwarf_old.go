package specmatch

// The helpers of the godwarf path, for its last readers (release/extract.go,
// layoutcheck/showc.go) until they read the type model: that path is
// deleted with this file. The checkers read typemodel (typecmp.go).

import (
	"fmt"

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

// IntShape classifies an integer-like DWARF type by size and signedness.
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

// StructNamesMatch is NamesMatch of a godwarf struct.
func StructNamesMatch(st *spec.Struct, d *godwarf.StructType, tds []string) bool {
	return NamesMatch(st, d.StructName, tds)
}

// EmptyClass reports a class with no data (size 1, no members).
func EmptyClass(t godwarf.Type) bool {
	st, ok := elfread.Strip(t).(*godwarf.StructType)
	return ok && st.Size() <= 1 && len(st.Field) == 0
}

// MemberLabel names a member of the godwarf path as typemodel.Field's
// Label does.
func MemberLabel(m *elfread.Member) string {
	switch {
	case m.Base:
		return "<base " + m.Name + ">"
	case m.Name == "":
		return fmt.Sprintf("<anonymous@%d>", m.Offset)
	}
	return m.Name
}
