package spec_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// crossesByWalk is the walk Crossing replaces: every field, parameter and
// return type of s split into words, for one enum.
func crossesByWalk(s *spec.Spec, e *spec.Enum) bool {
	names := func(t string) bool {
		for _, w := range strings.FieldsFunc(t, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if w == e.Name || (e.Tag != "" && w == e.Tag) {
				return true
			}
		}
		return false
	}
	for _, st := range s.Structs {
		for _, f := range st.Fields {
			if names(f.Type) {
				return true
			}
		}
	}
	for _, sig := range append(forwardSigs(s), reverseSigs(s)...) {
		if names(sig.Returns) {
			return true
		}
		for _, p := range sig.Params {
			if names(p.Type) {
				return true
			}
		}
	}
	return false
}

func forwardSigs(s *spec.Spec) (out []spec.Signature) {
	for _, f := range s.Forward {
		out = append(out, f.Signature)
	}
	return out
}

func reverseSigs(s *spec.Spec) (out []spec.Signature) {
	for _, r := range s.Reverse {
		out = append(out, r.Signature)
	}
	return out
}

// TestCrossingAgreesWithTheWalk: Crossing, made once for a spec, says of
// every enum what the walk over every field and prototype says: on the
// embedded release's enums, and on a crafted spec whose enums cross by a
// field, a pointer, an array, a parameter, a return and a tag, or only
// look as if they did (a longer name, a name inside another word).
func TestCrossingAgreesWithTheWalk(t *testing.T) {
	def, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	crafted := &spec.Spec{
		Structs: []*spec.Struct{{Name: "s", Fields: []spec.Field{{Type: "mode_t*"}, {Type: "kind_t[4]"}, {Type: "u32"}, {Type: "state_tt"}}}},
		Enums: []spec.Enum{{Name: "mode_t"}, {Name: "kind_t"}, {Name: "state_t"}, {Name: "arg_t"}, {Name: "ret_t"},
			{Name: "rev_t"}, {Name: "x_t", Tag: "u32"}, {Name: "unused_t"}, {Name: "mode"}},
	}
	crafted.Forward = []spec.Forward{{Name: "f", Signature: spec.Signature{Returns: "int", Params: []spec.Param{{Type: "const arg_t *"}}}}}
	crafted.Reverse = []spec.Reverse{{Name: "r", Signature: spec.Signature{Returns: "ret_t", Params: []spec.Param{{Type: "rev_t"}}}}}
	for name, s := range map[string]*spec.Spec{spec.Default: def, "crafted": crafted} {
		c := s.Crossing()
		crossing := 0
		for i := range s.Enums {
			e := &s.Enums[i]
			want := crossesByWalk(s, e)
			if got := c.Crosses(e); got != want {
				t.Errorf("%s: enum %s: Crossing says %v, the walk %v", name, e.Name, got, want)
			}
			if want {
				crossing++
			}
		}
		if crossing == 0 || crossing == len(s.Enums) {
			t.Errorf("%s: %d of %d enums cross: the cases cannot tell a wrong set from a right one", name, crossing, len(s.Enums))
		}
	}
}
