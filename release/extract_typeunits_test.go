package release

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// The same sources built with and without -fdebug-types-section
// (docs/nrtabi-extract.md#type-units) extract to the same rows, one
// struct and --all alike: the build without type units is the oracle.
// Cost: 8 compiles and 4 links (about 2 s on 2 cores).
const (
	tuExtractC = `
typedef struct tu_named { long a; unsigned f : 3, g : 5; } tu_named_t;
typedef struct { short x; char tag[6]; } tu_anon_t;
enum tu_color { TU_RED, TU_GREEN = 7 };
struct tu_holder { struct tu_named *pn; tu_named_t n; tu_anon_t an; enum tu_color c; };
struct tu_holder tu_h; tu_anon_t tu_a;
`
	tuExtractCxx = `
namespace tuns {
struct Inner { int a; char b; };
struct Outer { struct Nested { long x; } n; Inner in; Inner *p; };
}
struct CxxTop { tuns::Outer::Nested nn; tuns::Outer o; };
CxxTop cxx_top;
`
)

var sourceLine = regexp.MustCompile(`(?m)^source = "nrtabi extract from .*"$`)

// extractRows is a fragment's rows without what names the file (the
// header comments, each row's source), sorted.
func extractRows(b []byte) []string {
	var out []string
	for i, row := range strings.Split(string(b), "\n[[") {
		if i == 0 {
			continue // the header and skip counts
		}
		out = append(out, sourceLine.ReplaceAllString(row, "source = X"))
	}
	slices.Sort(out)
	return out
}

func TestExtractTypeUnits(t *testing.T) {
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"c.c": tuExtractC, "x.cc": tuExtractCxx} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(v string, types bool) string {
		flags := []string{"-gdwarf-" + v, "-O0"}
		k := v + "-plain"
		if types {
			flags, k = append(flags, "-fdebug-types-section"), v+"-types"
		}
		var objs []string
		for _, src := range []string{"c.c", "x.cc"} {
			obj := k + "-" + src + ".o"
			if err := cc.Object(dir, src, obj, flags...); err != nil {
				t.Fatal(err)
			}
			objs = append(objs, obj)
		}
		so := filepath.Join(dir, "lib"+k+".so")
		if err := cc.Shared(dir, so, "", "", objs, flags...); err != nil {
			t.Fatal(err)
		}
		return so
	}
	extract := func(path string, opt ExtractOptions) []string {
		var b bytes.Buffer
		if err := Extract(path, &b, opt); err != nil {
			t.Fatal(err)
		}
		return extractRows(b.Bytes())
	}
	for _, v := range []string{"4", "5"} {
		t.Run("dwarf"+v, func(t *testing.T) {
			plain, typed := build(v, false), build(v, true)
			for _, opt := range []ExtractOptions{
				{All: true, Jobs: 2},
				{Names: []string{"tu_named_t", "tu_anon_t", "tu_holder", "tuns::Outer", "CxxTop"}},
			} {
				want, got := extract(plain, opt), extract(typed, opt)
				if len(want) < 5 {
					t.Fatalf("the oracle extracts %d rows", len(want))
				}
				if !slices.Equal(got, want) {
					t.Errorf("All=%v: with type units\n%s\nwithout\n%s", opt.All, strings.Join(got, "\n[["), strings.Join(want, "\n[["))
				}
			}
		})
	}
}
