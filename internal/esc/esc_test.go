package esc

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain_name", "plain_name"},
		{"ns::box<char> ünï €", "ns::box<char> ünï €"},
		{"\x1b[2J", `\x1b[2J`},
		{"a\nb\tc\rd\a", `a\nb\tc\rd\a`},
		{"del\x7f", `del\x7f`},
		{"csi\xc2\x9b", `csi\u009b`}, // U+009B, a C1 CSI
		{"raw\x9b\xff", `raw\x9b\xff`},
		{"rtl\u202eevil", `rtl\u202eevil`},
		{`back\slash`, `back\\slash`},
		{`"quoted"`, `"quoted"`},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzString: the output holds no control byte, no DEL, no C1 control and
// no invalid UTF-8 and no rune that does not print, and reads back to s.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "x", "\x1b[2J\a\n", "\xc2\x9b", "\xff\xfe", `\x41`, "\u202e", "a\"b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		checkClean(t, out)
		back, err := strconv.Unquote(`"` + strings.ReplaceAll(out, `"`, `\"`) + `"`)
		if err != nil || back != s {
			t.Fatalf("String(%q) = %q reads back as %q, %v", s, out, back, err)
		}
	})
}

// checkClean fails t unless s is printable UTF-8 (what String passes on).
func checkClean(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%q: invalid UTF-8", s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || !strconv.IsPrint(r) {
			t.Fatalf("%q holds %U", s, r)
		}
	}
}

// TestTextKeepsBackslash: Text escapes what String escapes but the
// backslash, so relayed text does not grow at each hop.
func TestTextKeepsBackslash(t *testing.T) {
	for in, want := range map[string]string{
		`a\"b"`:           `a\"b"`,
		"x\x1b[2J\ny":     `x\x1b[2J\ny`,
		"\xff\u202e":      `\xff\u202e`,
		`already \x1b ok`: `already \x1b ok`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
		if got, again := Text(in), Text(Text(in)); got != again {
			t.Errorf("Text is not idempotent on %q: %q then %q", in, got, again)
		}
	}
}
