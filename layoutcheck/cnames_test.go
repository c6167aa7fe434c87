package layoutcheck

import "testing"

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
