package spec

import (
	"strings"
	"testing"
)

// TestDeclaratorGrammar: the postfix grammar spells C's nested declarators
// in order, with qualifiers of pointers after their '*'.
func TestDeclaratorGrammar(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		size    int
		shape   string // kinds from the outside in
	}{
		{"int*[4]*[10]", "int*[4]*[10]", 80, "[10] * [4] * int"}, // int *(*d[10])[4]
		{"int[7]*", "int[7]*", 8, "* [7] int"},                   // int (*g)[7]
		{"char* const", "char* const", 8, "const* char"},         // char *const q
		{"const char* const*", "const char* const*", 8, "* const* const char"},
		{"volatile  const u32 * volatile", "const volatile u32* volatile", 8, "volatile* const volatile u32"},
		{"u8[2][3][4]", "u8[2][3][4]", 24, "[2] [3] [4] u8"},
		{"char* const[4]", "char* const[4]", 32, "[4] const* char"},
		{"int*[2][3]*[5]", "int*[2][3]*[5]", 40, "[5] * [2] [3] * int"},
	} {
		ty, err := ParseType(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := shape(ty); ty.String() != tc.out || ty.Size() != tc.size || got != tc.shape {
			t.Errorf("%s: got %s, size %d, shape %q; want %s, %d, %q", tc.in, ty, ty.Size(), got, tc.out, tc.size, tc.shape)
		}
	}
	for _, bad := range []string{"char const*x", "char* constant", "* const", "char*const const["} {
		if _, err := ParseType(bad); err == nil {
			t.Errorf("ParseType(%q) accepted a bad type", bad)
		}
	}
}

func shape(t *Type) string {
	var parts []string
	for t != nil {
		q := ""
		if t.Const {
			q += "const "
		}
		if t.Volatile {
			q += "volatile "
		}
		switch t.Kind {
		case KindPointer:
			parts = append(parts, strings.TrimSpace(q)+"*")
		case KindArray:
			if t.Len < 0 {
				parts = append(parts, "[]")
			} else {
				parts = append(parts, "["+itoa(t.Len)+"]")
			}
		default:
			parts = append(parts, q+t.Name)
		}
		t = t.Elem
	}
	return strings.Join(parts, " ")
}
