package layoutcheck

import (
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/spec"
)

// TestCTextFromOutside: names from DWARF reach show --c's C only as
// identifiers that mean nothing else, comment text that cannot end its
// comment, and string bodies that cannot end their string.
func TestCTextFromOutside(t *testing.T) {
	for in, want := range map[string]string{
		"ns::box<char>": "ns_box_char",
		"int":           "int_",
		"unix":          "unix_",
		"__restrict":    "restrict_",
		"9lives":        "n_9lives",
		"x\x1b[2J":      "x_2J",
	} {
		if got := cIdent(in); got != want {
			t.Errorf("cIdent(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"a*/b":     `a*\/b`,
		"/*/":      `/\*\/`,
		"*/*/":     `*\/\*\/`,
		"a\\*/":    `a\\*\/`,
		"\x1b\n":   `\x1b\n`,
		"plain.so": "plain.so",
	} {
		if got := cComment(in); got != want {
			t.Errorf("cComment(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`a"b\c`:   `a\"b\\c`,
		"??/":     `\?\?/`,
		"\x1bA\n": `\033A\012`,
		"é":       `\303\251`,
	} {
		if got := cString(in); got != want {
			t.Errorf("cString(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCText: for any name, cIdent is an identifier C reads as nothing
// else, cComment holds no control byte and neither "*/" nor "/*", and
// cString is printable ASCII that a C compiler reads back as the name's
// bytes (decoded here by C's rules for the escapes it uses).
func FuzzCText(f *testing.F) {
	for _, s := range []string{"", "int", "a*/b", "/*/", "\x1b[2J\a\n", `"??/`, "\xff\xc2\x9b", "ns::box<char>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id := cIdent(s)
		if !spec.IsIdent(id) || cReserved()[id] {
			t.Fatalf("cIdent(%q) = %q", s, id)
		}
		cm := cComment(s)
		if strings.Contains(cm, "*/") || strings.Contains(cm, "/*") {
			t.Fatalf("cComment(%q) = %q", s, cm)
		}
		for i := 0; i < len(cm); i++ {
			if cm[i] < 0x20 || cm[i] == 0x7f {
				t.Fatalf("cComment(%q) = %q", s, cm)
			}
		}
		cs := cString(s)
		var back []byte
		for i := 0; i < len(cs); i++ {
			c := cs[i]
			if c < 0x20 || c >= 0x7f || c == '"' || c == '?' {
				t.Fatalf("cString(%q) = %q: raw %q", s, cs, c)
			}
			if c != '\\' {
				back = append(back, c)
				continue
			}
			switch {
			case i+1 < len(cs) && strings.IndexByte(`"\?`, cs[i+1]) >= 0:
				back = append(back, cs[i+1])
				i++
			case i+3 < len(cs):
				n, err := strconv.ParseUint(cs[i+1:i+4], 8, 8)
				if err != nil {
					t.Fatalf("cString(%q) = %q: %v", s, cs, err)
				}
				back = append(back, byte(n))
				i += 3
			default:
				t.Fatalf("cString(%q) = %q: a lone backslash", s, cs)
			}
		}
		if string(back) != s {
			t.Fatalf("cString(%q) = %q reads back as %q", s, cs, back)
		}
	})
}
