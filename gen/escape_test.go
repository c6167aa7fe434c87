package gen

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEscape: commentText never yields a comment delimiter, a trigraph, a
// control byte, a trailing backslash or bytes that are not UTF-8; cString
// yields one C string literal (under -std=c11's trigraphs) that decodes
// back to its input.
func FuzzEscape(f *testing.F) {
	for _, s := range append(hostileTexts, trickyTexts...) {
		f.Add(s)
	}
	f.Add("a*/b/*c??/d\\")
	f.Add("?\x00?\xff*")
	f.Fuzz(func(t *testing.T, s string) {
		c := commentText(s)
		if strings.Contains(c, "*/") || strings.Contains(c, "/*") || strings.Contains(c, "??") || strings.HasSuffix(c, `\`) || !utf8.ValidString(c) {
			t.Fatalf("commentText(%q) = %q", s, c)
		}
		for i := 0; i < len(c); i++ {
			if c[i] < 0x20 || c[i] == 0x7f {
				t.Fatalf("commentText(%q) = %q holds byte %#x", s, c, c[i])
			}
		}
		// Placed as the templates do, the comment ends where it should.
		if w := "/* " + c + " */"; strings.Index(w, "*/") != len(w)-2 {
			t.Fatalf("commentText(%q) ends the comment early", s)
		}
		q := cString(s)
		back, ok := unquoteC(q)
		if !ok || back != s || !utf8.ValidString(q) || strings.Contains(q, "??") {
			t.Fatalf("cString(%q) = %q, decodes to %q (%v)", s, q, back, ok)
		}
	})
}

// unquoteC decodes the C string literal the escapes of cString can form;
// ok is false for anything else (a raw quote, control byte or newline).
func unquoteC(q string) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	q = q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '"' || c < 0x20 || c == 0x7f:
			return "", false
		case c != '\\':
			b.WriteByte(c)
		case i+1 >= len(q):
			return "", false
		default:
			i++
			switch e := q[i]; {
			case e == '"' || e == '\\' || e == '?':
				b.WriteByte(e)
			case e == 'n':
				b.WriteByte('\n')
			case '0' <= e && e <= '7' && i+2 < len(q):
				v := int(e-'0')*64 + int(q[i+1]-'0')*8 + int(q[i+2]-'0')
				b.WriteByte(byte(v))
				i += 2
			default:
				return "", false
			}
		}
	}
	return b.String(), true
}
