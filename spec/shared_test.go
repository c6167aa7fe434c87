package spec_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/internal/specsame"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// TestMain: no test of the package wrote into the compiled releases that
// every compiled.Load shares.
func TestMain(m *testing.M) { os.Exit(specsame.AfterTests(m.Run())) }

// TestLoadedReleaseUnchanged: what takes a loaded release — a caller
// changing its own Spec's fields, a release assembled from the loaded rows
// (as `nrtabi release new` restates them: the same struct pointers, rows
// that share their parameter slices), the writer and the JSON view — leaves
// the compiled rows every compiled.Load shares as the TOML says.
func TestLoadedReleaseUnchanged(t *testing.T) {
	s, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	s.Dir, s.Release.Name, s.Files, s.Forward = "elsewhere", "renamed", nil, s.Forward[:1]

	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*spec.File{
		"release.toml": {Rows: &spec.Spec{Release: spec.Release{Name: "child", DerivedFrom: spec.Default, Fact: spec.Fact{Conf: spec.High, Source: "test"}}}},
		"rows.toml": {Rows: &spec.Spec{Structs: base.Structs, Enums: base.Enums, Forward: base.Forward,
			Reverse: base.Reverse, Constants: base.Constants, Messages: base.Messages}},
	}
	child, err := spec.Assemble(filepath.Join(t.TempDir(), "child"), "", files)
	if err != nil {
		t.Fatalf("a release restating every row of %s: %v", spec.Default, err)
	}
	var b bytes.Buffer
	w := &spec.Writer{W: &b}
	w.Spec(base)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(base.View()); err != nil {
		t.Fatal(err)
	}
	for _, r := range spec.Releases() {
		if err := specsame.AsTOML(r); err != nil {
			t.Fatal(err)
		}
	}
	if len(child.Structs) != len(base.Structs) || child.Structs[0] == base.Structs[0] || child.Structs[0].Pos.File == base.Structs[0].Pos.File {
		t.Fatalf("the assembled release does not hold its own restated rows: %d structs, the first at %v", len(child.Structs), child.Structs[0].Pos)
	}
}
