package specmatch

import (
	"github.com/nrtabi/nrtabi/spec"
)

// Names answers StructNamed, and which opaque type a DWARF struct is, for
// one spec by lookup instead of a walk over all its structs: a check of a
// whole library's fragment asks once per member, and for vmlinux's (7,155
// structs, 45,000 members) the walks were a tenth of its time.
type Names struct {
	structs []*spec.Struct
	opaques []spec.OpaqueType
	// own and alias: the first struct (its index) carrying a name as its
	// own (NameRank 0) or as its TAG_t alias (NameRank 1).
	own, alias map[string]int
	// opaqueTag: the first opaque type whose tag or name a DWARF struct
	// tag matches; opaqueName: the first whose name a typedef matches.
	opaqueTag, opaqueName map[string]int
}

// NewNames indexes sp's structs and opaque types (nil sp: none).
func NewNames(sp *spec.Spec) *Names {
	n := &Names{own: map[string]int{}, alias: map[string]int{}, opaqueTag: map[string]int{}, opaqueName: map[string]int{}}
	if sp == nil {
		return n
	}
	n.structs, n.opaques = sp.Structs, sp.OpaqueTypes
	first := func(m map[string]int, k string, i int) {
		if _, ok := m[k]; !ok {
			m[k] = i
		}
	}
	for i, st := range sp.Structs {
		first(n.own, st.Name, i)
		first(n.own, st.CTag(), i)
		for _, td := range st.Typedefs() {
			first(n.own, td, i)
		}
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

// lowest is the lowest index m has for tag (when tag is not "") and for
// tds, -1 for none.
func lowest(m map[string]int, tag string, tds []string) int {
	best := -1
	if i, ok := m[tag]; ok && tag != "" {
		best = i
	}
	for _, td := range tds {
		if i, ok := m[td]; ok && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// StructNamed is StructNamed(structs, tag, tds) of the indexed spec.
func (n *Names) StructNamed(tag string, tds []string) *spec.Struct {
	if i := lowest(n.own, tag, tds); i >= 0 {
		return n.structs[i]
	}
	if i := lowest(n.alias, tag, tds); i >= 0 {
		return n.structs[i]
	}
	return nil
}

// ByName is sp.StructByName(name) of the indexed spec: the first struct
// whose name, tag or an alias is name (its own names, which StructNamed
// looks up too).
func (n *Names) ByName(name string) *spec.Struct {
	if i, ok := n.own[name]; ok {
		return n.structs[i]
	}
	return nil
}

// Opaque is the first opaque type of the indexed spec a DWARF struct
// tagged tag, reached through the typedefs tds, is: its tag or name is
// tag, or its name one of tds; nil when none.
func (n *Names) Opaque(tag string, tds []string) *spec.OpaqueType {
	best := -1
	if i, ok := n.opaqueTag[tag]; ok && tag != "" {
		best = i
	}
	if i := lowest(n.opaqueName, "", tds); i >= 0 && (best < 0 || i < best) {
		best = i
	}
	if best < 0 {
		return nil
	}
	return &n.opaques[best]
}
