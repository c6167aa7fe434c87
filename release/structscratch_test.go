package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// scratchSource is structs nested by value three deep, each with another
// number of members and a bitfield (an opaque piece), and structs of
// growing and shrinking sizes, so that a worker's reused lists are longer
// and shorter than the next struct's.
func scratchSource() string {
	var b strings.Builder
	b.WriteString("struct leaf { char a; int b; unsigned c : 3, d : 5; long e; };\n")
	b.WriteString("struct mid { short m0; struct leaf l; int m1; unsigned m2 : 7; struct leaf l2; };\n")
	b.WriteString("struct top { struct mid a; char t0; struct mid b; double t1; struct leaf c; };\n")
	for i, n := range []int{40, 3, 17, 1, 60, 2} {
		fmt.Fprintf(&b, "struct s%d {", i)
		for k := range n {
			fmt.Fprintf(&b, " int f%d;", k)
		}
		b.WriteString(" };\n")
	}
	b.WriteString("struct top t; struct s0 v0; struct s1 v1; struct s2 v2; struct s3 v3; struct s4 v4; struct s5 v5;\n")
	return b.String()
}

// TestExtractAllScratch: extract --all through its workers' reused lists
// writes what fresh lists for every struct write, at -j 1 and -j 2; the
// planted faults (a written struct's members, its row's or its member
// names, left in the list the next struct is given) must change the
// output.
func TestExtractAllScratch(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("no C compiler: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "nest.c")
	if err := os.WriteFile(src, []byte(scratchSource()), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "nest.o")
	if err := cc.Object(dir, src, obj); err != nil {
		t.Fatal(err)
	}
	extract := func(jobs int) string {
		t.Helper()
		var out bytes.Buffer
		if err := Extract(obj, &out, ExtractOptions{All: true, Jobs: jobs}); err != nil {
			t.Fatalf("extract --all -j %d: %v", jobs, err)
		}
		return out.String()
	}
	freshStructLists = true
	want := extract(1)
	freshStructLists = false
	for _, row := range []string{`name = "top"`, `name = "mid"`, `name = "leaf"`, `name = "s4"`, `type = "mid"`, `type = "leaf"`} {
		if !strings.Contains(want, row) {
			t.Fatalf("the fresh lists' fragment has no %s:\n%s", row, want)
		}
	}
	for _, jobs := range []int{1, 2} {
		if got := extract(jobs); got != want {
			t.Errorf("-j %d through the reused lists differs from fresh lists:\n%s\nwant:\n%s", jobs, got, want)
		}
	}
	for name, plant := range map[string]*bool{"a written struct's members left in the next one's list": &plantStaleFields, "a written row's members left in the next row": &plantStaleRow,
		"a written struct's member names left in the next one's (s2 after s0)": &plantStaleNames} {
		*plant = true
		got := extract(1)
		*plant = false
		if got == want {
			t.Errorf("the planted fault (%s) wrote the same fragment: the test cannot see it", name)
		}
	}
}
