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

// FuzzIncludeHint: any --include value gets a one-line hint of bounded
// length that names a header of the tree or none, never a panic.
func FuzzIncludeHint(f *testing.F) {
	for _, s := range []string{"nec.h", "../nec.h", "nrt//nec.h", "", "/", "\\nec.h", "\x00", strings.Repeat("a/", 200)} {
		f.Add(s)
	}
	all := []string{"aaa/first.h", "nrt/nec.h", "nrt/nrt.h", "nrt/nrt_version.h"}
	f.Fuzz(func(t *testing.T, inc string) {
		if len(inc) > 1<<14 {
			return
		}
		h := includeHint(inc, all)
		if strings.Contains(h, "\n") || len(h) > 1024 {
			t.Fatalf("%q: hint %q", inc, h)
		}
		if strings.HasPrefix(h, "did you mean") {
			named := false
			for _, a := range all {
				named = named || strings.Contains(h, a)
			}
			if !named {
				t.Fatalf("%q: a suggestion that names no header: %q", inc, h)
			}
		}
	})
}
