package layoutcheck

import (
	"strings"
	"testing"
)

// TestIncludeHint: an --include that names no header is answered with the
// header of that base name, not the tree's first header (which the old
// message offered: "e.g. aaa/first.h" for nec.h).
func TestIncludeHint(t *testing.T) {
	all := []string{"aaa/first.h", "nrt/nec.h", "nrt/nrt.h", "nrt/nrt_version.h", "x/ndl.h", "y/ndl.h"}
	for _, c := range []struct{ inc, want string }{
		{"nec.h", "did you mean nrt/nec.h?"},
		{"./nec.h", "did you mean nrt/nec.h?"},
		{"nrt/nrt_verson.h", "did you mean nrt/nrt_version.h?"},
		{"ndl.h", "did you mean one of x/ndl.h, y/ndl.h?"},
		{"inc/nrt/nec.h", "did you mean nrt/nec.h?"},
		{"zzzzzzzz.h", "e.g. aaa/first.h"},
	} {
		got := includeHint(c.inc, all)
		if !strings.Contains(got, c.want) {
			t.Errorf("includeHint(%q) = %q, want %q", c.inc, got, c.want)
		}
	}
	_, err := headerRoots("/tree", all, []string{"nec.h"})
	if err == nil || !strings.Contains(err.Error(), "--include nec.h: no such header under the directory; did you mean nrt/nec.h?") {
		t.Errorf("headerRoots: %v", err)
	}
	if got := includeHint("a.h", nil); got != "the directory holds no header" {
		t.Errorf("empty tree: %q", got)
	}
	long := strings.Repeat("q", 10000) + ".h"
	if got := includeHint(long, all); !strings.Contains(got, "e.g.") {
		t.Errorf("a long name is not compared: %q", got)
	}
}
