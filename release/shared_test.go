package release

import (
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/specsame"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
)

// TestNewReleaseLeavesBaseUnchanged: `nrtabi release new` (and the binary
// side of `nrtabi diff`) restate the base release's rows into a new one,
// diff the two and generate from them; the base is a compiled release whose
// rows every Load shares, and after all that it still equals its TOML.
func TestNewReleaseLeavesBaseUnchanged(t *testing.T) {
	bins := buildReleaseBinaries(t, "2.32.0-synthetic")
	base := mustSpec(t, spec.Default)
	got, _ := newReleaseFrom(t, base, "restated", bins.Libnrt, bins.Libnccom)
	got.Dir, got.Release.Name = "binaries", "binaries" // as nrtabi diff names a binary side
	diff.Diff(base, got)
	if _, err := gen.Generate(base); err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(got); err != nil {
		t.Fatal(err)
	}
	for _, r := range spec.Releases() {
		if err := specsame.AsTOML(r); err != nil {
			t.Fatal(err)
		}
	}
}
