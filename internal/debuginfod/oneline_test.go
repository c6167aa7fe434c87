package debuginfod

import "testing"

// TestOneLine: a server's or a proxy's message that spans lines is printed
// on one, its breaks visible; nothing else changes.
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"plain":              "plain",
		"a\nb":               `a\nb`,
		"a\r\nb\rc\n":        `a\r\nb\rc\n`,
		`already \n escaped`: `already \n escaped`,
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
