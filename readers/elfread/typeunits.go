package elfread

import (
	"errors"
	"fmt"
	"sync"
)

// Type units (gcc -fdebug-types-section; docs/nrtabi-extract.md#type-units):
// a type's definition is written once, in a unit of its own that an 8-byte
// signature names (DWARF 5 DW_UT_type units in .debug_info). A DIE using
// it refers by DW_FORM_ref_sig8, or through a stub DIE of the unit that
// carries only DW_AT_signature. Both resolve here to the type unit's type
// DIE, so the graph has one node for the type, decoded once, as if the
// type had been written in place. A type unit writes its namespaces and
// enclosing classes as declarations, and the definition at the unit's top
// with DW_AT_specification naming its declaration in them: the scope of
// that declaration is the definition's.

const (
	attrSpecification = 0x47
	attrSignature     = 0x69
)

// sigTable maps the part's type unit signatures to their type DIEs, made
// once, on the first signature met.
type sigTable struct {
	once sync.Once
	at   map[uint64]uint64 // signature -> the type DIE's combined offset
	err  error
}

// sigTarget is the combined offset of the type DIE of the type unit with
// this signature, in d's .debug_info or its .debug_types. A signature no
// unit has, two units with one signature and a type DIE that is no type
// (or is itself a stub: a chain or a cycle of signatures) are refused by
// name.
func (d *Debug) sigTarget(sig uint64) (uint64, error) {
	o := d
	if d.sigOwner != nil {
		o = d.sigOwner
	}
	o.sigs.once.Do(func() { o.sigs.at, o.sigs.err = o.buildSigs() })
	if o.sigs.err != nil {
		return 0, o.sigs.err
	}
	off, ok := o.sigs.at[sig]
	if !ok {
		return 0, fmt.Errorf("signature %#x names no type unit", sig)
	}
	return off, nil
}

// errSigsLater is the scanner's refusal to follow a signature while the
// units are still being read (scanner.sigsLater): ScanAllTypes then
// builds the graph again once they all are.
var errSigsLater = errors.New("a signature met before every unit was read")

// sigTarget is d.sigTarget for the scanner's part, unless sigsLater.
func (sc *scanner) sigTarget(sig uint64) (uint64, error) {
	if sc.sigsLater {
		return 0, errSigsLater
	}
	return sc.d.sigTarget(sig)
}

func (d *Debug) buildSigs() (map[uint64]uint64, error) {
	at := map[uint64]uint64{}
	type where struct {
		section string
		off     int
	}
	unitOf := map[uint64]where{}
	for _, p := range []*Debug{d, d.typesPart} {
		if p == nil {
			continue
		}
		section := ".debug_info"
		if p.typesSection {
			section = ".debug_types"
		}
		sc := &scanner{d: p}
		for i := 0; ; i++ {
			u, ok, err := p.unit(i)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if !u.typeUnit {
				continue
			}
			if prev, dup := unitOf[u.sig]; dup {
				return nil, fmt.Errorf("type units at %s+%#x and %s+%#x have one signature, %#x", prev.section, prev.off, section, u.off, u.sig)
			}
			unitOf[u.sig] = where{section, u.off}
			if err := sc.checkTypeDIE(u); err != nil {
				return nil, fmt.Errorf("%s: %w", section, err)
			}
			at[u.sig] = uint64(p.base + u.typeDIE)
		}
	}
	return at, nil
}

// attachTypes adds the file's .debug_types (DWARF 4 type units) as a part
// of d's combined offset space, sharing d's abbreviations and strings.
func attachTypes(d *Debug) error {
	f := d.File
	z, err := f.debugStream("types")
	if err != nil {
		return err
	}
	var info []byte
	if z != nil {
		info = z.Bytes()
	} else if info, err = f.debugSection("types"); err != nil {
		return err
	}
	if len(info) == 0 {
		return nil
	}
	p := &Debug{Input: d.Input, File: f, Via: d.Via, info: info, infoZ: z, abbrev: d.abbrev, abbrevZ: d.abbrevZ,
		str: d.str, strOffsets: d.strOffsets, lineStr: d.lineStr, addr: d.addr, order: d.order,
		alt: d.alt, altMissing: d.altMissing, dwo: d.dwo, typesSection: true, sigOwner: d}
	d.typesPart = p
	return d.addPart(p)
}

// checkTypeDIE checks that a type unit's type offset names a type DIE and
// not a stub.
func (sc *scanner) checkTypeDIE(u *unit) error {
	tab, err := sc.abbrevTable(u, 0)
	if err != nil {
		return fmt.Errorf("type unit at %#x (signature %#x): %w", u.off, u.sig, err)
	}
	c := newCursor(".debug_info", sc.d.info, u.typeDIE, sc.d.order)
	c.Limit(u.end)
	code := c.Uleb()
	if c.Err() != nil || code == 0 || code >= uint64(len(tab)) || tab[code].fixed == -2 {
		return fmt.Errorf("type unit at %#x (signature %#x): no DIE at its type offset %#x", u.off, u.sig, u.typeDIE)
	}
	a := &tab[code]
	if _, ok := typeKind(a.tag); !ok {
		return fmt.Errorf("type unit at %#x (signature %#x): the DIE at its type offset %#x is a %s, not a type", u.off, u.sig, u.typeDIE, tagWord(a.tag))
	}
	if a.sig {
		return fmt.Errorf("type unit at %#x (signature %#x): the DIE at its type offset %#x is itself a stub naming a signature (a chain or a cycle of type units)", u.off, u.sig, u.typeDIE)
	}
	return nil
}

// sigOf is the type DIE of a signature as an offset in the scanner's
// part, failing the scanner when it has none; ok is false too when the
// DIE is in another part (a DWARF 4 .debug_types), whose part is then
// other.
func (sc *scanner) sigOf(sig uint64) (off int, other *Debug, ok bool) {
	c, err := sc.sigTarget(sig)
	if err != nil {
		sc.fail(err)
		return 0, nil, false
	}
	p := sc.d
	if c < uint64(p.base) || c >= uint64(p.base+len(p.info)) {
		o := p
		if p.sigOwner != nil {
			o = p.sigOwner
		}
		q, lo := o.part(c)
		return lo, q, false
	}
	return int(c) - p.base, nil, true
}

// stubTarget: when the DIE at lo (of the scanner's unit) is a stub with
// DW_AT_signature, the combined offset of the type DIE it stands for.
func (sc *scanner) stubTarget(lo int) (uint64, bool, error) {
	if !sc.tabSig {
		return 0, false, nil
	}
	c := newCursor(".debug_info", sc.d.info, lo, sc.d.order)
	c.Limit(sc.u.end)
	code := c.Uleb()
	if c.Err() != nil || code == 0 || code >= uint64(len(sc.tab)) || !sc.tab[code].sig {
		return 0, false, nil // not a stub; the decode of the DIE reports any fault
	}
	a := &sc.tab[code]
	saved := sc.c
	sc.c = c
	defer func() { sc.c = saved }()
	for i := range a.attrs {
		form, ok := sc.indirect(a.attrs[i].form)
		if !ok {
			break
		}
		if a.attrs[i].attr != attrSignature {
			sc.skipForm(form)
			continue
		}
		if form != formRefSig8 {
			return 0, false, fmt.Errorf("the DIE at %#x gives DW_AT_signature in form %#x, not DW_FORM_ref_sig8", lo, form)
		}
		sig := sc.c.Uint(8)
		if err := sc.c.Err(); err != nil {
			return 0, false, err
		}
		off, err := sc.sigTarget(sig)
		return off, err == nil, err
	}
	if err := sc.c.Err(); err != nil {
		return 0, false, err
	}
	return 0, false, nil
}

// specScope is where a type unit's declaration sits: its enclosing
// namespaces and classes, and whether a class is among them.
type specScope struct {
	qual   string
	nested bool
}

func (s specScope) names() []string {
	if s.qual == "" {
		return nil
	}
	return splitQualified(s.qual)
}

// specScopeOf is the scope of the declaration at lo, in the scanner's
// unit (a type unit's namespaces and classes are a few DIEs: the walk is
// made once per unit).
func (sc *scanner) specScopeOf(lo int) specScope {
	if sc.specU != sc.u {
		sc.specU, sc.specs = sc.u, walkSpecScopes(sc.d, sc.u)
	}
	return sc.specs[lo]
}

// walkSpecScopes records the scope of every named DIE of a unit inside
// its namespaces and named classes.
func walkSpecScopes(d *Debug, u *unit) map[int]specScope {
	out := map[int]specScope{}
	// Signatures are not followed (rawSigs): the walk needs names only,
	// and ScanAll's workers run it while unit headers are being read.
	walkNamedScopes(&scanner{d: d, rawSigs: true}, u, u.end, func(at int, s specScope) { out[at] = s })
	return out
}

// walkNamedScopes calls visit with the scope (its qualified name, and
// whether it is inside a class) of every named DIE of u that lies in
// namespaces and named classes only; other subtrees are passed over.
// It is the one scope walk of a unit: the lazy lookup's qualified names
// (uctx.walkScopes) and a type unit's specifications both read it. The
// walk ends before the first DIE at or past stop (u.end: the whole unit),
// and returns where it ended: every named DIE before that offset was
// visited. A walk that ends otherwise (the unit's end, or a fault, which
// the decode of the DIE itself reports) returns u.end, so nothing walks
// the unit again.
func walkNamedScopes(sc *scanner, u *unit, stop int, visit func(at int, s specScope)) int {
	if sc.enterUnit(u) != nil || !sc.cuChildren {
		return u.end
	}
	type frame struct {
		s    specScope
		scan bool
	}
	stack := []frame{{scan: true}}
	for sc.c.Left() > 0 && len(stack) > 0 && sc.failed() == nil {
		at := sc.c.Off()
		if at >= stop {
			return at
		}
		code := sc.c.Uleb()
		if code == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		a := sc.abbrevAt(code)
		if a == nil || a.children && len(stack) >= maxScopeDepth {
			return u.end
		}
		top := stack[len(stack)-1]
		if !top.scan || !a.named {
			if sc.passOver(a, u.end) {
				stack = append(stack, frame{})
			}
			continue
		}
		visit(at, top.s)
		if !a.children || !opensScope(a.tag) {
			// A leaf, or a subtree that opens no scope (an enum's
			// enumerators): none of its attributes is needed, so they are
			// passed over undecoded (a decode of every named DIE, its
			// name's bytes searched for the end, was a fifth of
			// libstdc++'s extract --all,
			// docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07).
			if sc.passOver(a, u.end) {
				stack = append(stack, frame{})
			}
			continue
		}
		// A namespace, or a class, struct or union with children.
		di := sc.decode(a)
		inner := frame{scan: true, s: top.s}
		if a.tag == tagNamespace {
			if addsScope(&di) {
				inner.s.qual = qualify(top.s.qual, string(di.name))
			}
		} else {
			inner.s = specScope{qual: qualify(top.s.qual, string(di.name)), nested: true}
			inner.scan = len(di.name) > 0
		}
		if !inner.scan && di.sibling > sc.c.Off() && di.sibling <= u.end {
			sc.c.Seek(di.sibling)
			continue
		}
		stack = append(stack, inner)
	}
	return u.end
}

// opensScope: a DIE of this tag names the scope of what it holds (a
// namespace, a class, struct or union).
func opensScope(tag uint32) bool {
	switch tag {
	case tagNamespace, tagStructType, tagClassType, tagUnionType:
		return true
	}
	return false
}

// specQual is the scope a type unit's definition takes from its
// declaration (DW_AT_specification), and whether the definition is
// nested in a class.
func (sc *scanner) specQual(spec int) (string, bool) {
	s := sc.specScopeOf(spec)
	return s.qual, s.nested
}
