// Package esc is the one escaping of bytes from outside (names read from
// DWARF and ELF symbol tables, SONAMEs, file and debug-link names, what a
// server or a peer sends) before they reach a terminal or a log: a control
// byte, an invalid UTF-8 byte or a rune that does not print is written as a
// Go escape, so no input can move the cursor, clear the screen, ring the
// bell or forge a line. Printable UTF-8 stays as it is. The text
// formatters (check's text report, show, error lines) apply it to every
// value they print; the JSON and JUnit writers have their own escaping.
package esc

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every byte that is not printable escaped as
// strconv.Quote would escape it (\n, \t, \x1b, \u202e, \xff for an invalid
// UTF-8 byte) and the backslash doubled, so the result has no byte below
// 0x20, no 0x7f, no C1 control (U+0080..U+009F), no raw byte >= 0x80 that is
// not part of a printable rune, and reads back with strconv.Unquote once
// its double quotes are escaped. s comes back unchanged, without a copy,
// when nothing needs escaping.
func String(s string) string { return escape(s, true) }

// Text is String with the backslash kept as it is: for text that is passed
// on from peer to peer and escaped again at each hop (an ABORT's reason
// relayed by the root), where doubling would grow it on every hop and would
// break the quoting of what it is embedded in. It is for reading, not for
// reading back.
func Text(s string) string { return escape(s, false) }

func escape(s string, backslash bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' && backslash {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\' && backslash:
				b.WriteString(`\\`)
			case c < 0x20 || c == 0x7f:
				// strconv's spelling: \a \b \f \n \r \t \v, else \xNN.
				q := strconv.QuoteRune(rune(c))
				b.WriteString(q[1 : len(q)-1])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hex = "0123456789abcdef"
