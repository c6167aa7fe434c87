package compat_test

import (
	"testing"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/spec"
)

// TestReleaseMatrix: a release pairs with itself; a copy of it with the
// compatibility id off by one, a dropped entry point, a renamed callback
// and a grown shared struct is refused for each, in the handoff's order.
func TestReleaseMatrix(t *testing.T) {
	good, err := spec.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	m := compat.ReleaseMatrix(set(t))
	if len(m.Cells) != len(m.Releases)*len(m.Releases) {
		t.Fatalf("%d cells for %d releases", len(m.Cells), len(m.Releases))
	}
	for _, c := range m.Cells {
		if c.Libnrt == c.Libnccom && c.Verdict != compat.Loads {
			t.Errorf("%s with itself: %s %v", c.Libnrt, c.Verdict, notes(m, c))
		}
	}
	for _, plant := range []struct {
		name string
		edit func(*spec.Spec)
		want compat.Class
	}{
		{"compat id", func(s *spec.Spec) {
			for i := range s.Constants {
				if s.Constants[i].Name == "NCCOM_COMPAT_ID" {
					v, _ := s.Constants[i].Int()
					s.Constants[i].Value = v - 1
				}
			}
		}, compat.CompatGate},
		{"entry point", func(s *spec.Spec) { s.Forward = s.Forward[:len(s.Forward)-1] }, compat.Dlsym},
		{"callback", func(s *spec.Spec) { s.Reverse[0].Name += "_renamed" }, compat.Reverse},
		{"struct", func(s *spec.Spec) {
			for _, st := range s.Structs {
				if st.Side == "both" {
					st.Size += 8
					return
				}
			}
		}, compat.Layout},
	} {
		t.Run(plant.name, func(t *testing.T) {
			other := cloneSpec(t, good)
			other.Release.Name = "9.9.9-planted"
			plant.edit(other)
			m := compat.ReleaseMatrix(compat.NewSet([]*spec.Spec{good, other}))
			for _, c := range m.Cells {
				if c.Libnrt == good.Release.Name && c.Libnccom == other.Release.Name && c.Verdict != plant.want {
					t.Errorf("planted %s: %s, want %s %v", plant.name, c.Verdict, plant.want, notes(m, c))
				}
			}
		})
	}
}

func notes(m *compat.Matrix, c compat.Cell) []string {
	var out []string
	for _, i := range c.Notes {
		out = append(out, m.Notes[i])
	}
	return out
}

// cloneSpec is an independent copy of sp to plant a fault in, read from
// the TOML (compiled.Load shares one copy with every caller).
func cloneSpec(t *testing.T, sp *spec.Spec) *spec.Spec {
	t.Helper()
	c, err := spec.Load(sp.Release.Name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
