package release

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// TestExtractForeignStructName: parser (unit b) holds a struct group of
// its own while unit a, first, defines another struct group, which is the
// one check finds by that name. Extracting parser must not write a row
// group of b's layout (check would judge it against a's): the members
// using it stay opaque, and a pointer to it names an opaque type. With the
// check of that planted away, the row is written.
func TestExtractForeignStructName(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	srcs := map[string]string{
		"a.c": "struct group { char *gr_name; unsigned gr_gid; char **gr_mem; };\nstruct group ga;\n",
		"b.c": "struct group { int depth; short kind; };\nstruct parser { struct group *groups; struct group g; int n; };\nstruct parser pb;\n",
	}
	for n, s := range srcs {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.Shared(dir, "libg.so", "libg.so", "", []string{"a.c", "b.c"}, "-g"); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libg.so")
	extract := func() string {
		var b bytes.Buffer
		if err := Extract(lib, &b, ExtractOptions{Names: []string{"parser"}, DebugDirs: []string{t.TempDir()}}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	frag := extract()
	if strings.Contains(frag, "[[struct]]\nname = \"group\"") {
		t.Fatalf("a row group of parser's private struct was written:\n%s", frag)
	}
	if !strings.Contains(frag, `type = "group*"`) {
		t.Fatalf("parser.groups is not a pointer to the opaque group:\n%s", frag)
	}
	plantNoForeignCheck = true
	defer func() { plantNoForeignCheck = false }()
	if frag := extract(); !strings.Contains(frag, "[[struct]]\nname = \"group\"") {
		t.Fatalf("with the check planted away, no row group was written: the test proves nothing:\n%s", frag)
	}
}
