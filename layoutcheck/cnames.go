package layoutcheck

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/typemodel"
)

// C spellings of DWARF names for show --c: identifiers for C++ and Rust
// names, C base types for other languages' ones.

var notIdent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]+`) })

// cIdent turns a DWARF name (C++ "ns::box<char>", Rust "{vtable}") into a C
// identifier. Any name is mangled, none refused: every byte outside
// [A-Za-z0-9_] becomes "_", and a result that C (or gcc's gnu11 mode, with
// its predefined unix/linux macros) reads as something other than an
// identifier gets a "_" appended, so a hostile name can at worst collide
// with another and fail to compile, never mean other C.
func cIdent(n string) string {
	s := strings.Trim(notIdent().ReplaceAllString(n, "_"), "_")
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "n_" + s
	}
	if cReserved()[s] {
		s += "_"
	}
	return s
}

// cReserved: C23's keywords (C11's among them), GNU C's, and the macros
// gcc predefines in its default gnu mode without a leading underscore.
// (cIdent trims leading underscores, so _Bool or __attribute__ cannot come
// out of it.) Made on first use, not at start-up: only show --c needs it
// (docs/benchmarks.md#start-up-2026-12-03).
var cReserved = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"alignas": true, "alignof": true, "asm": true, "auto": true, "bool": true, "break": true, "case": true,
		"char": true, "const": true, "constexpr": true, "continue": true, "default": true, "do": true,
		"double": true, "else": true, "enum": true, "extern": true, "false": true, "float": true, "for": true,
		"goto": true, "if": true, "inline": true, "int": true, "long": true, "nullptr": true, "register": true,
		"restrict": true, "return": true, "short": true, "signed": true, "sizeof": true, "static": true,
		"static_assert": true, "struct": true, "switch": true, "thread_local": true, "true": true,
		"typedef": true, "typeof": true, "typeof_unqual": true, "union": true, "unsigned": true, "void": true,
		"volatile": true, "while": true,
		"linux": true, "unix": true, "i386": true,
	}
})

// cComment makes s safe inside a C block comment: escaped (package esc, so
// one line, no control bytes), and a backslash put between any "*" and "/"
// that meet, so no "*/" ends the comment and no "/*" trips -Wcomment. esc
// doubles every backslash of s, so the ones put in here read back
// unambiguously.
func cComment(s string) string {
	s = esc.String(s)
	var b strings.Builder
	var last byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if last == '*' && c == '/' || last == '/' && c == '*' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		last = c
	}
	return b.String()
}

// cString spells s as the body of a C string literal that holds exactly
// its bytes: printable ASCII as it is, except the quote, the backslash and
// "?" (which a trigraph such as ??/ would turn into a backslash under
// -std=c11), and every other byte as a three-digit octal escape, which,
// unlike \x, cannot run into the character after it.
func cString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '?':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	return b.String()
}

// cBaseNames are base type names C accepts as they are.
var cBaseNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"char": true, "signed char": true, "unsigned char": true, "short int": true, "short unsigned int": true,
		"int": true, "unsigned int": true, "long int": true, "long unsigned int": true, "long long int": true,
		"long long unsigned int": true, "_Bool": true, "float": true, "double": true, "long double": true,
		"__int128": true, "__int128 unsigned": true, "_Float128": true, "_Float16": true,
	}
})

// cBaseName spells a DWARF base type in C: its own name when C has it, else
// the C type of the same kind and size (C++ bool, char16_t, Rust u64).
func cBaseName(t *typemodel.Type) string {
	if cBaseNames()[t.Name] {
		return t.Name
	}
	size := typemodel.SizeOf(t)
	switch t.Encoding {
	case typemodel.EncBoolean:
		return "_Bool"
	case typemodel.EncFloat:
		switch size {
		case 4:
			return "float"
		case 8:
			return "double"
		}
		return "long double"
	case typemodel.EncComplexFloat:
		switch size {
		case 8:
			return "_Complex float"
		case 16:
			return "_Complex double"
		}
		return "_Complex long double"
	case typemodel.EncSigned, typemodel.EncSignedChar:
		return intOfSize(size, true)
	case typemodel.EncUnsigned, typemodel.EncUnsignedChar, typemodel.EncAddress, typemodel.EncUTF:
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
