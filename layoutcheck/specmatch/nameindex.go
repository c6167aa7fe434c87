package specmatch

import (
	"github.com/nrtabi/nrtabi/spec"
)

// Names answers StructNamed, and which opaque type a DWARF struct is, for
// one spec by lookup instead of a walk over all its structs: a check of a
// whole library's fragment asks once per member, and for vmlinux's (7,155
// structs, 45,000 members) the walks were a tenth of its time. A struct's
// own names (NameRank 0) are the spec's one table of them (spec.Lookup:
// its name, its tag, its aliases, as StructByName reads them).
type Names struct {
	lookup  spec.Lookup
	structs []*spec.Struct
	opaques []spec.OpaqueType
	// alias: the first struct (its index) carrying a name as its TAG_t
	// alias (NameRank 1).
	alias map[string]int
	// opaqueTag: the first opaque type whose tag or name a DWARF struct
	// tag matches; opaqueName: the first whose name a typedef matches.
	opaqueTag, opaqueName map[string]int
}

// NewNames indexes sp's structs and opaque types (nil sp: none).
func NewNames(sp *spec.Spec) *Names {
	if sp == nil {
		sp = &spec.Spec{}
	}
	n := &Names{lookup: sp.Lookup(), structs: sp.Structs, opaques: sp.OpaqueTypes, alias: map[string]int{}, opaqueTag: map[string]int{}, opaqueName: map[string]int{}}
	first := func(m map[string]int, k string, i int) {
		if _, ok := m[k]; !ok {
			m[k] = i
		}
	}
	for i, st := range sp.Structs {
		first(n.alias, st.CTag()+"_t", i)
	}
	for i := range sp.OpaqueTypes {
		o := &sp.OpaqueTypes[i]
		first(n.opaqueTag, o.CTag(), i)
		first(n.opaqueTag, o.Name, i)
		first(n.opaqueName, o.Name, i)
	}
	return n
}

// lowest is the lowest index at gives for tag (when tag is not "") and
// for tds, -1 for none.
func lowest(at func(string) int, tag string, tds []string) int {
	best := -1
	if tag != "" {
		best = at(tag)
	}
	for _, td := range tds {
		if i := at(td); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// in is a map's index of a name, -1 for none.
func in(m map[string]int) func(string) int {
	return func(k string) int {
		if i, ok := m[k]; ok {
			return i
		}
		return -1
	}
}

// StructNamed is StructNamed(structs, tag, tds) of the indexed spec.
func (n *Names) StructNamed(tag string, tds []string) *spec.Struct {
	i := lowest(n.lookup.StructIndex, tag, tds)
	if i < 0 {
		i = lowest(in(n.alias), tag, tds)
	}
	if i < 0 {
		return nil
	}
	return n.structs[i]
}

// ByName is sp.StructByName(name) of the indexed spec.
func (n *Names) ByName(name string) *spec.Struct { return n.lookup.Struct(name) }

// Opaque is the first opaque type of the indexed spec a DWARF struct
// tagged tag, reached through the typedefs tds, is: its tag or name is
// tag, or its name one of tds; nil when none.
func (n *Names) Opaque(tag string, tds []string) *spec.OpaqueType {
	best := -1
	if tag != "" {
		best = in(n.opaqueTag)(tag)
	}
	if i := lowest(in(n.opaqueName), "", tds); i >= 0 && (best < 0 || i < best) {
		best = i
	}
	if best < 0 {
		return nil
	}
	return &n.opaques[best]
}
