package cfmt

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"1a31ba18", 0, "1a31ba18"},
		{"\x1b[31mred\x07", 0, `\x1b[31mred\a`},
		{"a\nb\r\tc\x7f", 0, `a\nb\r\tc\x7f`},
		{"\xff\xfe ok", 0, `\xff\xfe ok`},
		{"ünïcode ✓", 0, "ünïcode ✓"},
		{"bidi \u202e gnirts", 0, `bidi \u202e gnirts`},
		{"line\u2028sep", 0, `line\u2028sep`},
		{`back\slash "q"`, 0, `back\slash "q"`},
		{"abcdef", 3, "abc... (3 more bytes)"},
		{"\x00\x00", 1, `\x00... (1 more bytes)`},
	} {
		if got := Escape(tc.in, tc.max); got != tc.want {
			t.Errorf("Escape(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if got := Escape([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("Escape([]byte(%q), %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	if got := Escape(strings.Repeat("x", PeerTextMax+10), 0); !strings.HasSuffix(got, "... (10 more bytes)") {
		t.Errorf("the default bound: %q", got[len(got)-30:])
	}
}

// FuzzEscape: whatever the input, the output is valid UTF-8 with no control
// byte, and no longer than the bound allows.
func FuzzEscape(f *testing.F) {
	f.Add([]byte("\x1b]0;title\x07\n"), 16)
	f.Add([]byte("\xff\u202e\u2028ok"), 0)
	for _, pt := range hostile.PeerTexts() {
		f.Add([]byte(pt.Text), 8)
	}
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		max %= 1 << 16
		got := Escape(in, max)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 out: %q", got)
		}
		for _, r := range got {
			if r < 0x20 || r >= 0x7f && r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0x202e {
				t.Fatalf("a control rune %U out: %q", r, got)
			}
		}
		bound := max
		if bound < 1 {
			bound = PeerTextMax
		}
		if len(got) > 10*bound+32 {
			t.Fatalf("%d bytes out of a bound of %d", len(got), bound)
		}
	})
}
