package spec

import (
	"strings"
	"testing"
)

// TestAssemble: a release built in memory derives, resolves and validates
// as one read from disk: restated rows replace the parent's, a [remove]
// drops one, and a bad row is reported at the file it would be written to.
func TestAssemble(t *testing.T) {
	base, err := Load(Default)
	if err != nil {
		t.Fatal(err)
	}
	first := base.ByIndex()[0]
	restated := *first
	restated.Source = "restated in memory"
	gone := base.Constants[len(base.Constants)-1].Name
	layer := func(fwd Forward) map[string]*File {
		return map[string]*File{
			"release.toml": {Rows: &Spec{Release: Release{Name: "mem", DerivedFrom: Default, Fact: Fact{Conf: High, Source: "a test"}}},
				Remove: map[string][]string{"constant": {gone}}},
			"forward.toml": {Rows: &Spec{Forward: []Forward{fwd}}},
		}
	}
	s, err := Assemble("mem", "", layer(restated))
	if err != nil {
		t.Fatal(err)
	}
	if f := s.ForwardByName(first.Name); f == nil || f.Source != "restated in memory" || f.Pos.File != "mem/forward.toml" {
		t.Errorf("restated row: %+v", f)
	}
	if len(s.Constants) != len(base.Constants)-1 || len(s.Forward) != len(base.Forward) {
		t.Errorf("[remove] constant %s: %d constants (base %d), %d forward rows (base %d)", gone, len(s.Constants), len(base.Constants), len(s.Forward), len(base.Forward))
	}
	bad := restated
	bad.Returns = "no_such_type_t"
	_, err = Assemble("mem", "", layer(bad))
	if err == nil || !strings.Contains(err.Error(), "mem/forward.toml") || !strings.Contains(err.Error(), "no_such_type_t") {
		t.Fatalf("a bad type in memory: want an error at mem/forward.toml, got %v", err)
	}
	unknown := layer(restated)
	unknown["release.toml"].Remove["constants"] = []string{gone}
	if _, err := Assemble("mem", "", unknown); err == nil || !strings.Contains(err.Error(), `[remove] has no kind "constants"`) {
		t.Fatalf("a [remove] of a kind that does not exist: want an error naming it, got %v", err)
	}
	if _, err := Assemble("other", "", layer(restated)); err == nil || !strings.Contains(err.Error(), "does not match its directory") {
		t.Fatalf("a release named mem assembled as other: %v", err)
	}
}
