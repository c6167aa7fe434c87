package release

import (
	"strings"
	"testing"
)

// TestInputTextNotPasted: an input path (a --headers directory, a binary)
// reaches the spec's comments and sources only escaped: no line break, no
// control byte, no comment delimiter for gen to paste into C or Go.
func TestInputTextNotPasted(t *testing.T) {
	for _, p := range []string{"hdrs/*/ int injected; /*", "a\nb = 1", "x\x1b[2Jy", "caf\xe9", "plain/dir/libnrt.so.1 (build-id ab12)"} {
		got := inputText(p)
		if strings.Contains(got, "*/") || strings.Contains(got, "/*") || strings.ContainsAny(got, "\n\r\x1b\x00") || !isASCII(got) {
			t.Errorf("inputText(%q) = %q", p, got)
		}
		if c := comment("from " + inputList([]string{p, p})); strings.Count(c, "\n") != 1 || !strings.HasPrefix(c, "# ") {
			t.Errorf("comment of %q is not one comment line: %q", p, c)
		}
	}
	if got := inputText("plain/dir/libnrt.so.1 (build-id ab12)"); got != "plain/dir/libnrt.so.1 (build-id ab12)" {
		t.Errorf("a plain name is changed: %q", got)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
