package elfread

import "github.com/nrtabi/nrtabi/typemodel"

// The index's share of the graph's walk (ScanAllTypes,
// docs/layoutcheck.md#one-pass-over-the-units): in a C unit without
// namespaces or type units, the walk that decodes the unit's types
// (unitNodes) also finds what unitTypes' scan of the unit would find (its
// top level's struct, union and enum definitions, named or not, and
// typedefs, and a count of the named definitions inside a struct or union),
// so that the unit is walked once. Any other unit, and one whose walk
// failed, is scanned by unitTypes: the scopes of C++ (namespaces, a type
// unit's specifications) and the scan's own error texts are unitTypes'.

// walkIndex is one unit's index entries as its graph's walk finds them.
type walkIndex struct {
	// ok: the walk indexes the unit (begin says whether it can); out is
	// then what unitTypes gives for it, once listed.
	ok       bool
	out      unitTypes
	ts       *typeScanScratch
	typedefs []typedefAt
}

// plantNoNested and plantNoTypedefs are planted faults for the tests
// only: the walk's index counts no nested definition, or takes no
// typedef's name.
var plantNoNested, plantNoTypedefs bool

// begin readies ix for the unit sc has entered.
func (ix *walkIndex) begin(sc *scanner) {
	ix.ok = cLanguage(sc.lang) && !sc.u.typeUnit && !sc.tabSig && !sc.tabNS
	if !ix.ok {
		return
	}
	ix.out = unitTypes{}
	ix.ts = sc.typeScan()
	ix.typedefs = ix.ts.typedefs[:0]
}

// end lists what the walk found (failed: it did not get to the end).
func (ix *walkIndex) end(sc *scanner, failed bool) {
	if !ix.ok {
		return
	}
	if failed {
		ix.ok = false
	} else {
		ix.out = sc.listTypes(sc.u, ix.out, ix.ts, ix.typedefs)
	}
	clear(ix.typedefs)
	ix.ts.typedefs = ix.typedefs[:0]
}

// scanAttrs decodes the attributes unitTypes reads of a DIE whose
// abbreviation is a, at the cursor (past the DIE's code), signatures left
// unresolved as ScanAll's scan leaves them.
func (sc *scanner) scanAttrs(a *abbrev) dieInfo {
	raw := sc.rawSigs
	sc.rawSigs = true
	di := sc.decode(a)
	sc.rawSigs = raw
	return di
}

// definition records a struct, class, union or enum DIE of the unit's top
// level at at: the entry (nil for a declaration), for the walk to give it
// the node it decodes, and whether the named definitions among its
// children are to be counted (a named struct, class or union: unitTypes'
// nested scope).
func (ix *walkIndex) definition(sc *scanner, di *dieInfo, at int, tag uint32) (*Named, bool) {
	if di.decl {
		return nil, false
	}
	name := string(di.name)
	t := sc.named(at, name, tag)
	t.Size, t.Sized = int64(min(di.size, typemodel.MaxSize)), di.sized
	if name == "" {
		ix.ts.anon[at] = t
		return t, false
	}
	ix.out.types = append(ix.out.types, t)
	return t, tag != tagEnumerationType
}

// typedef records a typedef DIE of the unit's top level at at.
func (ix *walkIndex) typedef(sc *scanner, di *dieInfo, at int) {
	name, u := string(di.name), sc.u
	switch {
	case name == "" || plantNoTypedefs:
	case di.hasTypSig:
		ix.out.foreign = append(ix.out.foreign, foreignTypedef{name, at, di.typSig})
	case di.typ > 0 && !di.typAlt && di.typ >= u.dieStart && di.typ < u.end:
		ix.typedefs = append(ix.typedefs, typedefAt{name, at, di.typ})
	}
}

// nestedDef walks a named child DIE of a struct or union the walk's index
// lists, as unitTypes walks its nested scope: a named definition in it is
// counted in *sc.nested, and the children of a struct or union
// definition (named or not) are walked the same way. The cursor is past
// the DIE's code and ends past its subtree; depth is the DIE's (the
// unit's top level is 1).
func (sc *scanner) nestedDef(a *abbrev, depth int) {
	if a.children && depth >= maxScopeDepth {
		sc.c.Fail("DIEs nest more than %d deep", maxScopeDepth)
		return
	}
	di := sc.scanAttrs(a)
	if sc.failed() != nil {
		return
	}
	inner := false
	switch a.tag {
	case tagTypedef, tagNamespace:
	default: // struct, class, union, enum
		if !di.decl {
			if len(di.name) > 0 && !plantNoNested {
				*sc.nested++
			}
			inner = a.tag != tagEnumerationType
		}
	}
	if !inner || !di.children {
		sc.skipSubtree(&di)
		return
	}
	for sc.c.Left() > 0 && sc.failed() == nil {
		code := sc.c.Uleb()
		if code == 0 {
			return
		}
		ka := sc.abbrevAt(code)
		if ka == nil {
			return
		}
		if ka.named {
			sc.nestedDef(ka, depth+1)
		} else if sc.passOver(ka, sc.u.end) {
			sc.skipChildren()
		}
	}
}
