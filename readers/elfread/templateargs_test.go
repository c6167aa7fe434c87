package elfread

import (
	"fmt"
	"strings"
	"testing"
)

// TestFindStructsParsesTemplateArgsOnce: FindStructs of every instance of
// one template parses each wanted name's arguments once and each DIE's at
// most once, not once per pair compared (which, for n instances wanted,
// was n*n parses: a C++ library's fragment took 6 s to check), and still
// finds every instance, each by its exact name.
func TestFindStructsParsesTemplateArgsOnce(t *testing.T) {
	const n = 40
	var src strings.Builder
	src.WriteString("template <int K, typename T = char> struct box { T v[K]; };\n")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&src, "box<%d> b%d;\n", k, k)
	}
	d := openDebugT(t, cxxObjectOf(t, "box", src.String()))
	wants := make([][]string, n)
	for k := 1; k <= n; k++ {
		wants[k-1] = []string{fmt.Sprintf("box<%d>", k)}
	}
	before := templateArgsCalls.Load()
	found, err := d.FindStructs(wants)
	if err != nil {
		t.Fatal(err)
	}
	parses := templateArgsCalls.Load() - before
	for k, f := range found {
		if f == nil {
			t.Fatalf("box<%d> not found", k+1)
		}
		if want := fmt.Sprintf("box<%d, char>", k+1); f.Name != want {
			t.Errorf("box<%d> found as %s, want %s", k+1, f.Name, want)
		}
	}
	if parses > 3*n {
		t.Errorf("%d template argument lists parsed for %d wanted instances: want at most %d (each wanted name once, each DIE once)", parses, n, 3*n)
	}
}
