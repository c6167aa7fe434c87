package layoutcheck

import (
	"regexp"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// C spellings of DWARF names for show --c: identifiers for C++ and Rust
// names, C base types for other languages' ones.

var notIdent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]+`) })

// cIdent turns a DWARF name (C++ "ns::box<char>", Rust "{vtable}") into a C
// identifier.
func cIdent(n string) string {
	s := strings.Trim(notIdent().ReplaceAllString(n, "_"), "_")
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "n_" + s
	}
	return s
}

// cBaseNames are base type names C accepts as they are.
var cBaseNames = map[string]bool{
	"char": true, "signed char": true, "unsigned char": true, "short int": true, "short unsigned int": true,
	"int": true, "unsigned int": true, "long int": true, "long unsigned int": true, "long long int": true,
	"long long unsigned int": true, "_Bool": true, "float": true, "double": true, "long double": true,
	"__int128": true, "__int128 unsigned": true, "_Float128": true, "_Float16": true,
}

// cBaseName spells a DWARF base type in C: its own name when C has it, else
// the C type of the same kind and size (C++ bool, char16_t, Rust u64).
func cBaseName(t godwarf.Type) string {
	n := t.Common().Name
	if cBaseNames[n] {
		return n
	}
	size := t.Size()
	switch t.(type) {
	case *godwarf.BoolType:
		return "_Bool"
	case *godwarf.FloatType:
		switch size {
		case 4:
			return "float"
		case 8:
			return "double"
		}
		return "long double"
	case *godwarf.ComplexType:
		switch size {
		case 8:
			return "_Complex float"
		case 16:
			return "_Complex double"
		}
		return "_Complex long double"
	case *godwarf.IntType, *godwarf.CharType:
		return intOfSize(size, true)
	case *godwarf.UintType, *godwarf.UcharType, *godwarf.AddrType:
		return intOfSize(size, false)
	}
	return ""
}

func intOfSize(size int64, signed bool) string {
	var n string
	switch size {
	case 1:
		n = "char"
	case 2:
		n = "short"
	case 4:
		n = "int"
	case 8:
		n = "long"
	case 16:
		n = "__int128"
	default:
		return ""
	}
	if signed {
		if size == 1 {
			return "signed char"
		}
		return n
	}
	return "unsigned " + n
}
