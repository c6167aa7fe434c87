package spec

import (
	"math/rand/v2"
	"testing"
)

// TestLookupAgreesWithTheWalks: the tables resolve and diff look names up
// in give, for every name, the row StructByName, EnumByName and
// OpaqueTypeByName give, the first in order among rows sharing names,
// tags and aliases, the empty name included.
func TestLookupAgreesWithTheWalks(t *testing.T) {
	words := []string{"a", "b", "a_t", "b_t", "c", ""}
	r := rand.New(rand.NewPCG(3, 4))
	pick := func() string { return words[r.IntN(len(words))] }
	found := 0
	for round := range 300 {
		s := &Spec{}
		for range 1 + r.IntN(5) {
			st := &Struct{Name: pick(), Tag: pick()}
			for range r.IntN(3) {
				st.Aliases = append(st.Aliases, pick())
			}
			s.Structs = append(s.Structs, st)
		}
		for range r.IntN(4) {
			s.Enums = append(s.Enums, Enum{Name: pick(), Tag: pick()})
			s.OpaqueTypes = append(s.OpaqueTypes, OpaqueType{Name: pick(), Tag: pick()})
		}
		d := s.Lookup()
		for _, n := range words {
			if got, want := d.Struct(n), s.StructByName(n); got != want {
				t.Fatalf("round %d: struct %q: the table has %v, StructByName %v", round, n, got, want)
			}
			if got, want := d.Enum(n), s.EnumByName(n); got != want {
				t.Fatalf("round %d: enum %q: the table has %v, EnumByName %v", round, n, got, want)
			}
			if got, want := d.OpaqueType(n), s.OpaqueTypeByName(n); got != want {
				t.Fatalf("round %d: opaque type %q: the table has %v, OpaqueTypeByName %v", round, n, got, want)
			}
			if s.StructByName(n) != nil {
				found++
			}
		}
	}
	if found == 0 {
		t.Fatal("no name was found: the cases cannot tell a wrong table from a right one")
	}
}
