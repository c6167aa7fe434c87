package gen

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Free text of the spec (a source, a note, a SONAME in a banner) is written
// into comments and string literals of generated C, Go, linker scripts and
// Promela. The validator refuses the worst of it (spec rule text), but the
// generator does not rely on that: every byte sequence stays inside its
// comment or literal. docs/spec-format.md#where-spec-text-is-emitted lists
// the places.

// commentText makes s safe inside a one-line comment of C (/* */ or //),
// Go, a GNU ld script or Promela (cpp comments): a line break would end a
// // comment, "*/" a block comment, "/*" nests one (gcc -Wcomment), a
// trailing backslash would splice the next line into a // comment, and
// "??/" is a backslash under -std=c11's trigraphs: a '/' next to a '*' and
// a '?' next to a '?' are written \x2f and \x3f. Control characters,
// invisible format characters and bytes that are not UTF-8 (which Go
// source may not hold) are written as \xNN or \uNNNN; everything else is
// kept as it is.
func commentText(s string) string {
	if plainComment(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '/' && (i > 0 && s[i-1] == '*' || strings.HasPrefix(s[i+1:], "*")):
			b.WriteString(`\x2f`) // every '/' next to a '*': "*/*" must not become "*\/*"
		case r == '?' && (i > 0 && s[i-1] == '?' || strings.HasPrefix(s[i+1:], "?")):
			b.WriteString(`\x3f`)
		case r == '\\' && i+n == len(s):
			b.WriteString(`\x5c`)
		case r < 0x80 && (r < 0x20 || r == 0x7f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// plainComment reports whether s needs no escaping in a comment: printable
// ASCII without the delimiters, a trigraph or a trailing backslash.
func plainComment(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return !strings.Contains(s, "*/") && !strings.Contains(s, "/*") && !strings.Contains(s, "??") && !strings.HasSuffix(s, `\`)
}

// cString quotes s as a C string literal: quote, backslash and "?" after
// "?" (a trigraph under -std=c11) escaped, a newline as \n, every other
// control character, invisible format character and byte that is not
// UTF-8 as a three-digit octal escape (never greedy, unlike \x).
func cString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '?' && i > 0 && s[i-1] == '?':
			b.WriteString(`\?`)
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f, r >= 0x80 && !unicode.IsPrint(r):
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\%03o`, c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}
