package compiled_test

import (
	"os"
	"testing"

	"github.com/nrtabi/nrtabi/internal/specsame"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// TestMain: no test of the package wrote into the shared compiled releases.
func TestMain(m *testing.M) { os.Exit(specsame.AfterTests(m.Run())) }

// TestCompiledEqualsTOML holds zcompiled.go to the TOML it was generated
// from: every embedded release loads from the compiled form (so it is
// current) and equals, field by field and with its type expressions bound,
// the validated TOML load.
func TestCompiledEqualsTOML(t *testing.T) {
	for _, r := range spec.Releases() {
		t.Run(r, func(t *testing.T) {
			if compiled.LoadCompiled(r) == nil {
				t.Fatalf("release %s has no current compiled form: run 'make generate'", r)
			}
			if err := specsame.AsTOML(r); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCompiledPositions: an error on a compiled release still names the
// key's own line, read on demand from the embedded file.
func TestCompiledPositions(t *testing.T) {
	c := compiled.LoadCompiled(spec.Default)
	if c == nil {
		t.Fatalf("release %s has no current compiled form: run 'make generate'", spec.Default)
	}
	want, err := spec.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	st, wst := c.Structs[0], want.Structs[0]
	for _, key := range []string{"size", "name", ""} {
		if got, w := c.PosOf(&st.Fact, key), want.PosOf(&wst.Fact, key); got != w {
			t.Errorf("PosOf(%s, %q) = %v, TOML load says %v", st.Name, key, got, w)
		}
	}
	f, wf := &st.Fields[len(st.Fields)-1], &wst.Fields[len(wst.Fields)-1]
	if got, w := c.PosOf(&f.Fact, "type"), want.PosOf(&wf.Fact, "type"); got != w || got.Line == 0 {
		t.Errorf("PosOf(field type) = %v, TOML load says %v", got, w)
	}
}

// TestLoadUnknownRelease: Load of a release that is not embedded is
// spec.Load's error, naming the release.
func TestLoadUnknownRelease(t *testing.T) {
	if _, err := compiled.Load("9.9.9"); err == nil {
		t.Error("compiled.Load accepted a release that is not embedded")
	}
}
