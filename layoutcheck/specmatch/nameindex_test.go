package specmatch

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nrtabi/nrtabi/spec"
)

// opaqueNamed is the walk Names.Opaque replaces: the first opaque type
// whose tag or name the DWARF tag is, or whose name one of tds is.
func opaqueNamed(sp *spec.Spec, tag string, tds []string) *spec.OpaqueType {
	for i := range sp.OpaqueTypes {
		o := &sp.OpaqueTypes[i]
		if tag != "" && (tag == o.CTag() || tag == o.Name) {
			return o
		}
		for _, n := range tds {
			if n == o.Name {
				return o
			}
		}
	}
	return nil
}

// TestNamesAgreeWithTheWalks: the index answers what the walks over every
// struct (StructNamed) and every opaque type answer, first in spec order
// included, over specs whose structs share names, tags, aliases and TAG_t
// spellings in every way, and queries of every kind of name (own, alias,
// typedef, empty tag, no match).
func TestNamesAgreeWithTheWalks(t *testing.T) {
	words := []string{"a", "b", "c", "a_t", "b_t", "c_t", "a_impl", "b_impl", "_t", ""}
	pick := func(r *rand.Rand) string { return words[r.IntN(len(words))] }
	r := rand.New(rand.NewPCG(1, 2))
	queries, hits := 0, 0
	for round := range 300 {
		sp := &spec.Spec{}
		for i := range 1 + r.IntN(6) {
			st := &spec.Struct{Name: pick(r), Tag: pick(r)}
			if st.Name == "" {
				st.Name = fmt.Sprintf("s%d", i)
			}
			for range r.IntN(3) {
				st.Aliases = append(st.Aliases, pick(r))
			}
			sp.Structs = append(sp.Structs, st)
		}
		for range r.IntN(4) {
			sp.OpaqueTypes = append(sp.OpaqueTypes, spec.OpaqueType{Name: pick(r), Tag: pick(r)})
		}
		n := NewNames(sp)
		for range 40 {
			tag := pick(r)
			var tds []string
			for range r.IntN(3) {
				tds = append(tds, pick(r))
			}
			queries++
			want, got := StructNamed(sp.Structs, tag, tds), n.StructNamed(tag, tds)
			if want != got {
				t.Fatalf("round %d: StructNamed(%q, %q) = %v by the index, %v by the walk", round, tag, tds, got, want)
			}
			if want, got := sp.StructByName(tag), n.ByName(tag); want != got {
				t.Fatalf("round %d: ByName(%q) = %v by the index, %v by StructByName", round, tag, got, want)
			}
			wo, go_ := opaqueNamed(sp, tag, tds), n.Opaque(tag, tds)
			if wo != go_ {
				t.Fatalf("round %d: Opaque(%q, %q) = %v by the index, %v by the walk", round, tag, tds, go_, wo)
			}
			if want != nil || wo != nil {
				hits++
			}
		}
	}
	if hits == 0 || hits == queries {
		t.Fatalf("%d of %d queries matched: the cases do not tell a wrong index from a right one", hits, queries)
	}
	if NewNames(nil).StructNamed("a", nil) != nil || NewNames(nil).Opaque("a", nil) != nil {
		t.Error("the index of no spec named something")
	}
}
