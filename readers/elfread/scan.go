package elfread

import (
	"bytes"
	"debug/dwarf"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/typemodel"
)

// unit is one unit header of .debug_info.
type unit struct {
	off, dieStart, end int
	version            int
	addrSize, offSize  int
	abbrevOff          uint64
	typeUnit           bool
	unitType           uint8  // DWARF 5 unit type (0 before DWARF 5)
	dwoID              uint64 // skeleton and split units (DWARF 5 header)
	// sig and typeDIE: a type unit's signature and the offset (in the
	// part's .debug_info) of the DIE of the type it holds (typeunits.go).
	sig     uint64
	typeDIE int
}

type attrSpec struct {
	attr, form uint32
	fixed      int32 // encoded size when fixed, else -1
	// implicit is a DW_FORM_implicit_const's value, read as unsigned (a
	// positive signed LEB128 reads the same; ScanAll reads byte sizes so).
	implicit uint64
}

type abbrev struct {
	tag      uint32
	children bool
	attrs    []attrSpec
	fixed    int // total encoded size when every form is fixed, else -1
	named    bool
	sibling  bool
	// sig: the DIE carries DW_AT_signature, a stub standing for the type
	// of a type unit (typeunits.go).
	sig bool
}

type abbrevSlot struct {
	key   abbrevKey
	valid bool
	tab   []abbrev
	attrs []attrSpec
	sigs  bool // some abbreviation carries DW_AT_signature
	ns    bool // some abbreviation is a DW_TAG_namespace
	// lent: tab and attrs are another scanner's (lendAbbrevs), read
	// only; a table parsed into this slot gets lists of its own.
	lent bool
}

// lendAbbrevs gives sc the unit table src parsed last (its slot 0), to
// read without parsing it again: a unit's scope walk (uctx.walkScopes)
// needs its own cursor but the same table, and parsing it a second time
// was a quarter of the walk.
func (sc *scanner) lendAbbrevs(src *scanner) {
	if src.slots[0].valid {
		sc.slots[0] = src.slots[0]
		sc.slots[0].lent = true
	}
}

// unlend drops a table lendAbbrevs gave sc: its lender parses the next
// one into the same lists.
func (sc *scanner) unlend() {
	if sl := &sc.slots[0]; sl.lent {
		*sl = abbrevSlot{}
	}
}

type abbrevKey struct {
	off                        uint64
	version, addrSize, offSize int
}

// scanner finds the DIEs of wanted types by name without decoding anything
// else. It reads through a cursor whose first error sticks; every loop over
// the input ends when the cursor fails, and the caller reports that error.
type scanner struct {
	d *Debug
	// Two reusable abbreviation tables: the unit being scanned, and the unit
	// a typedef's target is peeked in. gcc writes one table per unit, so
	// caching them all would only grow the heap.
	slots [2]abbrevSlot

	// per unit
	u      *unit
	tab    []abbrev
	tabSig bool // tab has a DW_AT_signature stub (typeunits.go)
	tabNS  bool // tab has a namespace (walkindex.go)
	// rawSigs: decode leaves signatures unresolved (ScanAll's workers,
	// which run while the unit headers are still being read).
	rawSigs bool
	// sigsLater: a signature fails with errSigsLater instead of being
	// followed (ScanAllTypes' builds, which run while later units are
	// still being inflated: the signatures' table walks every unit).
	sigsLater  bool
	strOffBase uint64
	c          cursor // over the unit's bytes of .debug_info
	err        error  // a failure outside the cursor (abbreviations, strings)
	// specU and specs: the scopes of a type unit's named DIEs, which a
	// definition's DW_AT_specification takes its scope from
	// (typeunits.go).
	specU *unit
	specs map[int]specScope
	// lang and cuChildren are the unit DIE's DW_AT_language and whether it
	// has children (enterUnit).
	lang       uint64
	cuChildren bool
	// names and slab: the type front end's string copies and pending
	// nodes (typedecode.go).
	names map[string]string
	slab  []pending
	// byPlace: str2's names by where their bytes are (nameSlots), made
	// once the scanner has spelled nameCacheAfter names.
	byPlace *[nameSlots]nameSlot
	spelled int
	// recycle (AllTypes' workers): the slabs of pending nodes and the
	// arenas of their members a unit took are listed, and given back for
	// the next unit when none of its pending nodes outlives its link
	// (typeslab.go).
	recycle bool
	pool    pendingPool
	// spans: abbrevTable's scratch list of each code's attributes, kept
	// from table to table (a library has a table per unit).
	spans []abbrevSpan
	// The children of the type being decoded, before they are copied to
	// lists of their exact length.
	fieldBuf  []typemodel.Field
	pfieldBuf []pfield
	enumBuf   []typemodel.Enumerator // tscan: unitTypes' scratch (scanall.go).
	tscan     *typeScanScratch
	// nested: while a struct the walk's index lists is decoded, its count
	// of the named definitions inside one (walkindex.go); nil otherwise.
	nested *int
	// The chunks the graph's nodes and lists are carved from (typeslab.go).
	types []typemodel.Type
	// freeTypes: nodes of the worker's earlier units that nothing
	// references any more (dropReps), which newType hands out first.
	freeTypes  []*typemodel.Type
	fieldArena []typemodel.Field
	enumArena  []typemodel.Enumerator
}

// fail records the scanner's first failure.
func (sc *scanner) fail(err error) {
	if sc.err == nil {
		sc.err = err
	}
}

// failed reports the first failure of the scanner or of its cursor.
func (sc *scanner) failed() error {
	if sc.err != nil {
		return sc.err
	}
	return sc.c.Err()
}

// parseUnit reads the unit header at off.
func (d *Debug) parseUnit(off int) (unit, error) {
	c := newCursor(".debug_info", d.info, off, d.order)
	u := unit{off: off, offSize: 4}
	length := c.Uint(4)
	if length == 0xffffffff {
		length = c.Uint(8)
		u.offSize = 8
	}
	if c.Err() != nil {
		return unit{}, fmt.Errorf("unit header at %#x is cut off", off)
	}
	p := c.Off()
	if length > uint64(len(d.info)-p) || length < 7 {
		return unit{}, fmt.Errorf("unit at %#x claims %d bytes; the section has %d left", off, length, len(d.info)-p)
	}
	u.end = p + int(length)
	c.Limit(u.end)
	u.version = int(c.Uint(2))
	switch {
	case u.version >= 2 && u.version <= 4:
		u.abbrevOff = c.Uint(u.offSize)
		u.addrSize = int(c.U8())
		if d.typesSection {
			// A .debug_types unit header (DWARF 4, §7.5.1.2).
			u.sig = c.Uint(8)
			u.typeDIE = int(min(c.Uint(u.offSize), 1<<40))
			u.typeUnit = true
		}
	case u.version == 5:
		ut := c.U8()
		u.unitType = ut
		u.addrSize = int(c.U8())
		u.abbrevOff = c.Uint(u.offSize)
		switch ut {
		case unitTypeSkeleton, unitTypeSplitCompile:
			u.dwoID = c.Uint(8)
		case unitTypeType, unitTypeSplitType:
			u.sig = c.Uint(8)
			u.typeDIE = int(min(c.Uint(u.offSize), 1<<40))
			u.typeUnit = true
		}
	default:
		return unit{}, fmt.Errorf("unit at %#x has DWARF version %d; versions 2 to 5 are understood", off, u.version)
	}
	if c.Err() != nil {
		return unit{}, fmt.Errorf("unit header at %#x is cut off", off)
	}
	switch u.addrSize {
	case 4, 8:
	default:
		return unit{}, fmt.Errorf("unit at %#x has %d-byte addresses; 4 or 8 are understood", off, u.addrSize)
	}
	u.dieStart = c.Off()
	if u.typeUnit {
		// The type's offset is from the unit's start, and names a DIE of
		// the unit (DWARF 5, §7.5.1.3).
		if u.typeDIE < u.dieStart-u.off || u.typeDIE >= u.end-u.off {
			return unit{}, fmt.Errorf("type unit at %#x (signature %#x) puts its type at %#x, outside the unit's DIEs", off, u.sig, u.typeDIE)
		}
		u.typeDIE += u.off
	}
	return u, nil
}

// unit returns the i-th unit, reading headers only as far as needed: a scan
// that stops early never touches the rest of .debug_info. ok is false past
// the last unit.
func (d *Debug) unit(i int) (u *unit, ok bool, err error) {
	for len(d.units) <= i {
		next := 0
		if n := len(d.units); n > 0 {
			next = d.units[n-1].end
		}
		if next >= len(d.info) {
			return nil, false, nil
		}
		// A unit header is at most 4+8+2+1+1+8+8+8 bytes (DWARF 5, 64-bit).
		if err := d.ensure(d.infoZ, next+40); err != nil {
			return nil, false, err
		}
		nu, err := d.parseUnit(next)
		if err != nil {
			return nil, false, InputErrorf(d.File.Path, "corrupted DWARF: %w", err)
		}
		if err := d.ensure(d.infoZ, nu.end); err != nil {
			return nil, false, err
		}
		d.units = append(d.units, nu)
	}
	return &d.units[i], true, nil
}

// unitContaining returns the unit whose DIEs include off.
func (d *Debug) unitContaining(off int) (*unit, error) {
	start := 0
	if n := len(d.units); n > 0 && off < d.units[n-1].end {
		start = sort.Search(n, func(i int) bool { return d.units[i].end > off })
	}
	for i := start; ; i++ {
		u, ok, err := d.unit(i)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("offset %#x is in no unit", off)
		}
		if off < u.end {
			if off < u.dieStart {
				return nil, fmt.Errorf("offset %#x is inside a unit header", off)
			}
			return u, nil
		}
	}
}

// abbrevAt is the abbreviation of a DIE code; an unknown code is corruption
// (nil, and the cursor fails).
func (sc *scanner) abbrevAt(code uint64) *abbrev {
	if code >= uint64(len(sc.tab)) || sc.tab[code].fixed == -2 {
		sc.c.Fail("DIE uses abbreviation code %d, which the unit's table does not define", code)
		return nil
	}
	return &sc.tab[code]
}

// abbrevSpan is where one abbreviation's attributes are in the table's
// one backing array.
type abbrevSpan struct{ code, from, to int }

// maxAbbrevCode bounds the dense abbreviation table (gcc numbers codes from
// 1 up; a unit with a million different DIE shapes does not exist).
const maxAbbrevCode = 1 << 20

// abbrevTable parses (once per offset and unit shape) an abbreviation table
// into a dense slice indexed by code, all attributes in one backing array.
// A corrupted table gives nil and an error.
func (sc *scanner) abbrevTable(u *unit, slot int) ([]abbrev, error) {
	key := abbrevKey{u.abbrevOff, u.version, u.addrSize, u.offSize}
	sl := &sc.slots[slot]
	if sl.valid && sl.key == key {
		return sl.tab, nil
	}
	sl.valid = false
	if sl.lent {
		sl.tab, sl.attrs, sl.lent = nil, nil, false
	}
	if u.abbrevOff >= uint64(len(sc.d.abbrev)) {
		return nil, fmt.Errorf("unit at %#x names abbreviations at %#x, past the end of .debug_abbrev", u.off, u.abbrevOff)
	}
	// A compressed .debug_abbrev is inflated a step past the table's start;
	// a table that runs past what is inflated is read again with more.
	want := int(u.abbrevOff) + 4096
	spans := sc.spans[:0]
	var tab []abbrev
	var all []attrSpec
	sigs, ns := false, false
again:
	if err := sc.d.ensure(sc.d.abbrevZ, want); err != nil {
		return nil, err
	}
	c := newCursor(".debug_abbrev", sc.d.abbrev, int(u.abbrevOff), sc.d.order)
	tab, all, spans = sl.tab[:0], sl.attrs[:0], spans[:0]
	sigs, ns = false, false
	for c.Err() == nil {
		code := c.Uleb()
		if code == 0 {
			break
		}
		if code > maxAbbrevCode {
			c.Fail("abbreviation code %d (at most %d are understood)", code, maxAbbrevCode)
			break
		}
		tag := c.Uleb()
		a := abbrev{tag: uint32(tag), children: c.U8() != 0}
		switch a.tag {
		case tagStructType, tagClassType, tagUnionType, tagTypedef, tagNamespace, tagEnumerationType:
			a.named = true
		}
		from := len(all)
		for c.Err() == nil {
			at := c.Uleb()
			fm := c.Uleb()
			if at == 0 && fm == 0 {
				break
			}
			var implicit uint64
			if fm == formImplicitConst {
				implicit = c.Uleb()
			}
			if fm > 0xffff {
				c.Fail("attribute form %#x", fm)
				break
			}
			fs := fixedFormSize(uint32(fm), u.version, u.addrSize, u.offSize)
			all = append(all, attrSpec{attr: uint32(at), form: uint32(fm), fixed: int32(fs), implicit: implicit})
			if at == attrSibling {
				a.sibling = true
			}
			if at == attrSignature {
				a.sig = true
			}
			if fs < 0 || a.fixed < 0 {
				a.fixed = -1
			} else {
				a.fixed += fs
			}
		}
		for int(code) >= len(tab) {
			tab = append(tab, abbrev{fixed: -2})
		}
		tab[code] = a
		sigs = sigs || a.sig
		ns = ns || a.tag == tagNamespace
		spans = append(spans, abbrevSpan{int(code), from, len(all)})
	}
	if sc.d.abbrevShort(c.Off()) {
		want = c.Off() + 64<<10
		goto again
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	for _, sp := range spans {
		tab[sp.code].attrs = all[sp.from:sp.to:sp.to]
	}
	sc.spans = spans
	sl.key, sl.valid, sl.tab, sl.attrs, sl.sigs, sl.ns = key, true, tab, all, sigs, ns
	return tab, nil
}

// skipForm steps the cursor over a value of the form. Block lengths are
// checked against what is left, so no length moves the cursor backwards.
func (sc *scanner) skipForm(form uint32) {
	c := &sc.c
	switch form {
	case formString:
		c.CString()
		return
	case formSdata, formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx, formGNUAddrIndex, formGNUStrIndex:
		c.SkipLeb()
		return
	case formBlock1:
		c.Skip(c.Uint(1))
		return
	case formBlock2:
		c.Skip(c.Uint(2))
		return
	case formBlock4:
		c.Skip(c.Uint(4))
		return
	case formBlock, formExprloc:
		c.Skip(c.Uleb())
		return
	case formIndirect:
		if f, ok := sc.indirect(form); ok {
			sc.skipForm(f)
		}
		return
	}
	if n := fixedFormSize(form, sc.u.version, sc.u.addrSize, sc.u.offSize); n >= 0 {
		c.Skip(uint64(n))
		return
	}
	c.Fail("unknown attribute form %#x", form)
}

// passOver moves past a DIE whose subtree cannot hold a wanted type: over
// the whole subtree when the producer left a sibling pointer, else past its
// attributes. It reports whether the DIE's children are still to be walked
// (without decoding). The pointer is taken forward only and inside the unit
// (end), so it can never make the scan go round.
func (sc *scanner) passOver(a *abbrev, end int) bool {
	if !a.children {
		sc.skipAttrs(a)
		return false
	}
	if a.sibling {
		if di := sc.decode(a); di.sibling > sc.c.Off() && di.sibling <= end {
			sc.c.Seek(di.sibling)
			return false
		}
	} else {
		sc.skipAttrs(a)
	}
	return true
}

func (sc *scanner) skipAttrs(a *abbrev) {
	if a.fixed >= 0 {
		sc.c.Skip(uint64(a.fixed))
		return
	}
	for i := range a.attrs {
		if f := a.attrs[i].fixed; f >= 0 {
			sc.c.Skip(uint64(f))
		} else {
			sc.skipForm(a.attrs[i].form)
		}
	}
}

// readUint reads an unsigned value of a fixed-size or LEB form (0 for
// other forms, which it still steps over).
func (sc *scanner) readUint(form uint32) uint64 {
	c := &sc.c
	switch form {
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return c.Uint(1)
	case formData2, formRef2, formStrx2, formAddrx2:
		return c.Uint(2)
	case formStrx3, formAddrx3:
		return c.Uint(3)
	case formData4, formRef4, formStrx4, formAddrx4, formRefSup4:
		return c.Uint(4)
	case formData8, formRef8, formRefSup8, formRefSig8:
		return c.Uint(8)
	case formUdata, formRefUdata, formStrx, formAddrx, formGNUStrIndex:
		return c.Uleb()
	case formStrp, formSecOffset, formLineStrp, formStrpSup, formRefAddr, formGNUStrpAlt, formGNURefAlt:
		return c.Uint(sc.u.offSize)
	case formFlagPresent:
		return 1
	}
	sc.skipForm(form)
	return 0
}

// str looks a name up in a string table; an offset outside it is corruption.
func (sc *scanner) str(section string, tab []byte, off uint64) []byte {
	s, ok := cStringAt(tab, off)
	if !ok {
		sc.fail(&formatError{Section: section, Offset: int(min(off, 1<<62)), Msg: fmt.Sprintf("string offset %#x outside a %d-byte string table", off, len(tab))})
	}
	return s
}

// nameOf decodes a name attribute value without copying.
func (sc *scanner) nameOf(form uint32) []byte {
	switch form {
	case formString:
		return sc.c.CString()
	case formStrp, formLineStrp, formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex, formGNUStrpAlt, formStrpSup:
		return sc.strValue(form, sc.readUint(form))
	}
	sc.skipForm(form)
	return nil
}

// strValue resolves a string form's value: an offset into .debug_str (or
// the supplement's), .debug_line_str, or an index into the string offsets
// table. A name in a supplement that was not found (--allow-missing-debug)
// is nil.
func (sc *scanner) strValue(form uint32, v uint64) []byte {
	switch form {
	case formStrp:
		return sc.str(".debug_str", sc.d.str, v)
	case formLineStrp:
		return sc.str(".debug_line_str", sc.d.lineStr, v)
	case formGNUStrpAlt, formStrpSup:
		if sc.d.alt == nil {
			return nil
		}
		return sc.str(".debug_str of "+sc.d.alt.Path(), sc.d.alt.str, v)
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex:
		idx := v
		so := sc.d.strOffsets
		w := uint64(sc.u.offSize)
		if idx > uint64(len(so))/w || sc.strOffBase > uint64(len(so)) || idx*w > uint64(len(so))-sc.strOffBase || uint64(len(so))-sc.strOffBase-idx*w < w {
			sc.fail(&formatError{Section: ".debug_str_offsets", Offset: int(min(sc.strOffBase, 1<<62)), Msg: fmt.Sprintf("string index %d outside the table", idx)})
			return nil
		}
		oc := newCursor(".debug_str_offsets", so, int(sc.strOffBase+idx*w), sc.d.order)
		return sc.str(".debug_str", sc.d.str, oc.Uint(sc.u.offSize))
	}
	return nil
}

// defaultStrOffBase is where a unit's string offsets start when its unit DIE
// does not say: past the table's header in DWARF 5 (the split units'
// case), at 0 for the GNU extension to DWARF 4.
func defaultStrOffBase(u *unit) uint64 {
	switch {
	case u.version < 5:
		return 0
	case u.offSize == 8:
		return 16
	}
	return 8
}

// refOf reads a reference value as a section offset.
func (sc *scanner) refOf(form uint32) (int, bool) {
	switch form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata:
		v := sc.readUint(form)
		if v > uint64(len(sc.d.info)) {
			return 0, false
		}
		return sc.u.off + int(v), true
	case formRefAddr:
		v := sc.readUint(form)
		if v > uint64(len(sc.d.info)) {
			return 0, false
		}
		return int(v), true
	}
	sc.skipForm(form)
	return 0, false
}

// addsScope: a namespace DIE whose name is a component of the qualified
// names inside it. An inline namespace (DW_AT_export_symbols),
// libstdc++'s __cxx11 and an anonymous namespace add none; every walker
// (the lookup, ScanAll's index, the graph, the scope walk) asks this, so a
// name is spelled alike by each (docs/layoutcheck.md#finding-structs).
func addsScope(di *dieInfo) bool {
	return !di.export && len(di.name) > 0 && string(di.name) != "__cxx11"
}

// dieInfo is what the scanner decodes of a named DIE.
type dieInfo struct {
	name     []byte
	decl     bool
	sibling  int  // 0 when absent
	typ      int  // referenced type, 0 when absent
	typAlt   bool // typ is an offset in the supplementary file
	export   bool
	children bool
	tag      uint32
	size     uint64 // DW_AT_byte_size (ScanAll only)
	sized    bool
	spec     int // DW_AT_specification, 0 when absent
	// sigAt: a stub's DW_AT_signature, as the type unit's type DIE (0:
	// none); typPart, sigPart: the part typ, sigAt are in when not the
	// scanner's (a DWARF 4 .debug_types).
	sigAt            int
	typPart, sigPart *Debug
	// rawSig: the signature of typ (typSig) or of the stub (stubSig),
	// not resolved (a ScanAll worker: the units are still being read).
	typSig, stubSig uint64
	hasTypSig       bool
	hasStubSig      bool
}

// decode reads the attributes of a DIE the scanner cares about, leaving the
// cursor after the DIE's attributes.
func (sc *scanner) decode(a *abbrev) dieInfo {
	di := dieInfo{children: a.children, tag: a.tag}
	for i := range a.attrs {
		as := &a.attrs[i]
		form, ok := sc.indirect(as.form)
		if !ok {
			return di
		}
		switch as.attr {
		case attrName:
			di.name = sc.nameOf(form)
		case attrDeclaration:
			di.decl = form == formFlagPresent || sc.readUint(form) != 0
		case attrSibling:
			di.sibling, _ = sc.refOf(form)
		case attrType:
			if form == formGNURefAlt || form == formRefSup4 || form == formRefSup8 {
				v := sc.readUint(form)
				di.typ, di.typAlt = int(min(v, 1<<62)), true
			} else if form == formRefSig8 && sc.rawSigs {
				di.typSig, di.hasTypSig = sc.readUint(form), true
			} else if form == formRefSig8 {
				di.typ, di.typPart, _ = sc.sigOf(sc.readUint(form))
			} else {
				di.typ, _ = sc.refOf(form)
			}
		case attrSpecification:
			di.spec, _ = sc.refOf(form)
		case attrSignature:
			if form == formRefSig8 && sc.rawSigs {
				di.stubSig, di.hasStubSig = sc.readUint(form), true
			} else if form == formRefSig8 {
				di.sigAt, di.sigPart, _ = sc.sigOf(sc.readUint(form))
			} else {
				sc.skipForm(form)
			}
		case attrExportSymbols:
			di.export = form == formFlagPresent || sc.readUint(form) != 0
		case attrByteSize:
			switch form {
			case formData1, formData2, formData4, formData8, formUdata:
				di.size, di.sized = sc.readUint(form), true
			case formImplicitConst:
				di.size, di.sized = as.implicit, true
			default:
				sc.skipForm(form) // an expression (a variable-size type): no size
			}
		default:
			if as.fixed >= 0 && form == as.form {
				sc.c.Skip(uint64(as.fixed))
			} else {
				sc.skipForm(form)
			}
		}
	}
	return di
}

// Found is where a wanted struct was found in the DWARF.
type Found struct {
	Offset dwarf.Offset // the struct, class or union DIE (FindEnums: the enum DIE), in the combined offset space of the Debug's parts
	Name   string       // its qualified DWARF name
	Via    string       // "struct TAG" or "typedef NAME"
	DIE    dwarf.Offset // the DIE's offset in File's .debug_info
	File   string       // the file holding the DIE
	From   string       // how File was found: ViaEmbedded, ViaSupplement, ViaDWO, ...
}

type wantName struct {
	parts []string // qualified name split at "::"
	// args: the template arguments of the last part (TemplateArgs), nil
	// when it names no template; made once, where parsing them for every
	// DIE of the same template was two fifths of a check of a C++
	// library's fragment (5,485 structs: thousands of instances of a few
	// templates, each compared with every wanted instance).
	args   []string
	target int // index of the wanted struct
	rank   int // twice the name's place in its want's list (0 is the most specific); one more for a match by template-argument prefix
}

// finder looks up structs by name in one Debug.
type finder struct {
	sc     *scanner
	enums  bool // FindEnums: enumeration DIEs are wanted, struct-like ones not
	byBase map[string][]wantName
	found  []*Found
	rank   []int // the rank of the name each found want was found by
	// open counts the wants not yet found by their first name: a want
	// found by a later name may still be found by a better one in a
	// later unit, so the scan goes on until open is 0.
	open int
	// DIEsVisited counts the DIEs the scan decoded or skipped, for the bench.
	DIEsVisited int
}

// splitQualified splits "a::b<c::d>::e" at top-level "::".
func splitQualified(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ':':
			if depth == 0 && i+1 < len(s) && s[i+1] == ':' {
				parts = append(parts, s[start:i])
				start = i + 2
				i++
			}
		}
	}
	return append(parts, s[start:])
}

func baseName(s string) string {
	if i := strings.IndexByte(s, '<'); i > 0 {
		return s[:i]
	}
	return s
}

// FindStructs locates each wanted struct by its names, most specific
// first: a DIE found by an earlier name of a want wins over one found by
// a later name, whatever their order in the file (a spec struct list is
// struct list, not the typedef list_t of another struct defined in an
// earlier unit); a template instance of exactly the name wins over one
// whose arguments only begin with the name's (the fallback that lets
// std::basic_ostringstream<char> name the instance with the default
// arguments); and between DIEs found alike the first in file order wins.
// The result has one entry per want (nil when absent).
func (d *Debug) FindStructs(wants [][]string) (found []*Found, err error) {
	return d.find(wants, false)
}

// FindEnums locates each wanted enum (a DW_TAG_enumeration_type, by tag or
// through typedefs) as FindStructs does structs; read one with
// Types().Enum.
func (d *Debug) FindEnums(wants [][]string) (found []*Found, err error) {
	return d.find(wants, true)
}

func (d *Debug) find(wants [][]string, enums bool) (found []*Found, err error) {
	f := &finder{sc: &scanner{d: d}, byBase: map[string][]wantName{}, enums: enums}
	f.found, f.rank = make([]*Found, len(wants)), make([]int, len(wants))
	f.open = len(wants)
	for i, names := range wants {
		for r, n := range names {
			parts := splitQualified(n)
			last := parts[len(parts)-1]
			b := baseName(last)
			w := wantName{parts: parts, target: i, rank: 2 * r}
			if wi := strings.IndexByte(last, '<'); wi >= 0 {
				w.args = TemplateArgs(last[wi:])
			}
			f.byBase[b] = append(f.byBase[b], w)
		}
	}
	// The main file first, then the supplement and the split units: a
	// struct found alike in more than one is taken from the first.
	for _, p := range d.all() {
		f.sc = &scanner{d: p}
		for i := 0; f.open > 0; i++ {
			u, ok, err := p.unit(i)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if err := f.scanUnit(u); err != nil {
				return nil, InputErrorf(p.Path(), "corrupted DWARF: %w", err)
			}
		}
		// The scanner is done with: its table is no longer written, and
		// the decode of a struct found in that unit reads it (newUctx).
		if sl := f.sc.slots[0]; sl.valid {
			sl.lent = true
			p.foundTable.Store(&sl)
		}
	}
	return f.found, nil
}

// enterUnit sets the scanner up for a unit and reads its unit DIE's string
// offsets base and language, leaving the cursor at the first child: the one
// start of every walk over a unit (the struct scan, ScanAll, the type
// front end). cuChildren is false when the unit DIE has no children, or
// none could be read.
func (sc *scanner) enterUnit(u *unit) error {
	sc.u, sc.err = u, nil
	tab, err := sc.abbrevTable(u, 0)
	if err != nil {
		return err
	}
	sc.tab, sc.tabSig, sc.tabNS = tab, sc.slots[0].sigs, sc.slots[0].ns
	sc.strOffBase = defaultStrOffBase(u)
	sc.lang, sc.cuChildren = 0, false
	sc.c = newCursor(".debug_info", sc.d.info, u.dieStart, sc.d.order)
	sc.c.Limit(u.end)
	code := sc.c.Uleb()
	if code == 0 {
		return sc.failed()
	}
	cu := sc.abbrevAt(code)
	if cu == nil {
		return sc.failed()
	}
	for i := range cu.attrs {
		as := &cu.attrs[i]
		form, ok := sc.indirect(as.form)
		if !ok {
			break
		}
		switch as.attr {
		case attrStrOffsetsBase:
			sc.strOffBase = sc.readUint(form)
		case attrLanguage:
			v, _, _ := sc.constant(form, as)
			sc.lang = uint64(v)
		default:
			sc.skipForm(form)
		}
	}
	sc.cuChildren = cu.children
	return sc.failed()
}

type scope struct {
	scan  bool
	names []string // enclosing namespaces (inline ones left out)
}

// maxScopeDepth bounds the DIE tree's nesting (gcc's deepest real trees
// are a few dozen levels of namespaces, classes and lexical blocks).
const maxScopeDepth = 4096

func (f *finder) scanUnit(u *unit) error {
	sc := f.sc
	if err := sc.enterUnit(u); err != nil || !sc.cuChildren {
		return err
	}
	stack := []scope{{scan: true}}
	for sc.c.Left() > 0 && len(stack) > 0 && sc.failed() == nil {
		dieOff := sc.c.Off()
		code := sc.c.Uleb()
		f.DIEsVisited++
		if code == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		a := sc.abbrevAt(code)
		if a == nil {
			break
		}
		if a.children && len(stack) >= maxScopeDepth {
			sc.c.Fail("DIEs nest more than %d deep", maxScopeDepth)
			break
		}
		top := &stack[len(stack)-1]
		if !top.scan || !a.named || a.sig {
			if sc.passOver(a, u.end) {
				stack = append(stack, scope{})
			}
			continue
		}
		di := sc.decode(a)
		if sc.failed() != nil {
			break
		}
		names := top.names
		if di.spec != 0 && u.typeUnit {
			// A type unit's definition at its top, whose declaration in
			// the namespaces above says where it is (typeunits.go).
			s := sc.specScopeOf(di.spec)
			if s.nested {
				if di.children {
					stack = append(stack, scope{})
				}
				continue
			}
			names = s.names()
		}
		if a.tag == tagNamespace {
			names := top.names
			if addsScope(&di) {
				names = append(append([]string(nil), top.names...), string(di.name))
			}
			if di.children {
				stack = append(stack, scope{scan: true, names: names})
			}
			continue
		}
		if len(di.name) > 0 {
			f.match(di, names, dieOff)
		}
		if f.open == 0 {
			return sc.failed()
		}
		if di.children {
			if di.sibling > sc.c.Off() && di.sibling <= u.end {
				sc.c.Seek(di.sibling)
			} else {
				stack = append(stack, scope{})
			}
		}
	}
	return sc.failed()
}

func (f *finder) match(di dieInfo, scopeNames []string, dieOff int) {
	name := di.name
	base := name
	if i := bytes.IndexByte(name, '<'); i > 0 {
		base = name[:i]
	}
	cands, ok := f.byBase[string(base)]
	if !ok {
		return
	}
	dieName := string(name)
	var dieArgs []string // the DIE's template arguments, parsed on first need
	argsOf := func() []string {
		if dieArgs == nil {
			dieArgs = []string{}
			if ni := strings.IndexByte(dieName, '<'); ni >= 0 {
				dieArgs = TemplateArgs(dieName[ni:])
			}
		}
		return dieArgs
	}
	for _, w := range cands {
		ok, exact := qualifiedMatch(w.parts, w.args, scopeNames, dieName, argsOf)
		if !ok {
			continue
		}
		if !exact {
			// A template named by a prefix of its arguments (the defaults
			// left out) is the name's fallback: an instance of exactly
			// that name wins over it, wherever it is (cupt's variadic
			// Tuple<const char*, std::string> beside Tuple<const char*,
			// std::string, std::string>).
			w.rank++
		}
		if !f.better(w) {
			continue
		}
		qual := strings.Join(append(append([]string(nil), scopeNames...), dieName), "::")
		switch di.tag {
		case tagTypedef:
			if di.typAlt {
				// A typedef of a struct the supplement holds.
				alt := f.sc.d.alt
				if alt == nil {
					continue
				}
				saved := f.sc
				f.sc = &scanner{d: alt}
				_, off, ok := f.resolveTypedef(nil, di.typ)
				if ok {
					f.take(w, f.at(off, qual, "typedef "+qual))
				}
				f.sc = saved
				continue
			}
			p, off, ok := f.resolveTypedef(di.typPart, di.typ)
			if !ok {
				continue
			}
			f.take(w, f.atIn(p, off, qual, "typedef "+qual))
		default:
			if di.decl || (di.tag == tagEnumerationType) != f.enums {
				continue
			}
			f.take(w, f.at(dieOff, qual, kindWord(di.tag)+" "+qual))
		}
	}
}

// better reports whether a DIE found by w would be a better answer for
// its want than the one it has: none yet, or one found by a later name.
func (f *finder) better(w wantName) bool {
	return f.found[w.target] == nil || w.rank < f.rank[w.target]
}

// take records fd as w's want's answer (better said it is one).
func (f *finder) take(w wantName, fd *Found) {
	if w.rank == 0 {
		f.open-- // better said this want had no answer of rank 0 yet
	}
	f.found[w.target], f.rank[w.target] = fd, w.rank
}

// at is a Found for a DIE of the part being scanned.
func (f *finder) at(off int, name, via string) *Found {
	return f.atIn(f.sc.d, off, name, via)
}

// atIn is a Found for a DIE of part p.
func (f *finder) atIn(p *Debug, off int, name, via string) *Found {
	return &Found{Offset: dwarf.Offset(p.base + off), Name: name, Via: via, DIE: dwarf.Offset(off), File: p.Path(), From: p.Via}
}

func kindWord(tag uint32) string {
	switch tag {
	case tagClassType:
		return "class"
	case tagUnionType:
		return "union"
	case tagEnumerationType:
		return "enum"
	}
	return "struct"
}

// qualifiedMatch compares a wanted qualified name with a DIE name in its
// scope. A wanted template name matches when its arguments are a prefix of
// the DIE's (std::basic_ostringstream<char> names the instance with default
// traits and allocator). wantArgs are TemplateArgs of the wanted name's
// last part, nameArgs gives the DIE name's.
func qualifiedMatch(parts, wantArgs, scopeNames []string, name string, nameArgs func() []string) (ok, exact bool) {
	if len(parts)-1 != len(scopeNames) {
		return false, false
	}
	for i, s := range scopeNames {
		if parts[i] != s {
			return false, false
		}
	}
	want := parts[len(parts)-1]
	if want == name {
		return true, true
	}
	wi := strings.IndexByte(want, '<')
	ni := strings.IndexByte(name, '<')
	if wi < 0 || ni < 0 || want[:wi] != name[:ni] {
		return false, false
	}
	wa, na := wantArgs, nameArgs()
	if len(wa) > len(na) {
		return false, false
	}
	for i := range wa {
		if wa[i] != na[i] {
			return false, false
		}
	}
	return true, false
}

// templateArgsCalls counts TemplateArgs calls (tests: the finder parses a
// name's arguments once, not once per comparison).
var templateArgsCalls atomic.Int64

// TemplateArgs splits "<a, b<c, d> >" into normalised top-level arguments.
func TemplateArgs(s string) []string {
	templateArgsCalls.Add(1)
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "<")
	s = strings.TrimSuffix(s, ">")
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.ReplaceAll(s[start:i], " ", ""))
				start = i + 1
			}
		}
	}
	return append(out, strings.ReplaceAll(s[start:], " ", ""))
}

// resolveTypedef follows a typedef's target through typedefs, qualifiers
// and type unit stubs to a struct, class or union definition (an enum's,
// for FindEnums), starting in part in (nil: the part being scanned); the
// result is in part p.
func (f *finder) resolveTypedef(in *Debug, off int) (p *Debug, _ int, _ bool) {
	sc := f.sc
	if in != nil && in != sc.d {
		sc = &scanner{d: in}
	}
	for range 16 {
		if off <= 0 || off >= len(sc.d.info) {
			return nil, 0, false
		}
		u, err := sc.d.unitContaining(off)
		if err != nil {
			return nil, 0, false
		}
		saved, savedTab, savedBase, savedC, savedErr := sc.u, sc.tab, sc.strOffBase, sc.c, sc.err
		restore := func() { sc.u, sc.tab, sc.strOffBase, sc.c, sc.err = saved, savedTab, savedBase, savedC, savedErr }
		slot := 1
		if u == saved {
			slot = 0
		}
		tab, err := sc.abbrevTable(u, slot)
		if err != nil {
			restore()
			return nil, 0, false
		}
		sc.u, sc.tab, sc.err = u, tab, nil
		sc.c = newCursor(".debug_info", sc.d.info, off, sc.d.order)
		sc.c.Limit(u.end)
		code := sc.c.Uleb()
		if code == 0 || int(min(code, 1<<31)) >= len(sc.tab) || sc.tab[code].fixed == -2 {
			restore()
			return nil, 0, false
		}
		a := &sc.tab[code]
		di := sc.decode(a)
		bad := sc.failed() != nil
		restore()
		if bad {
			return nil, 0, false
		}
		if a.sig {
			off = di.sigAt // a stub: the type unit's type
			if di.sigPart != nil && di.sigPart != sc.d {
				sc = &scanner{d: di.sigPart}
			}
			continue
		}
		switch a.tag {
		case tagStructType, tagClassType, tagUnionType:
			if di.decl || f.enums {
				return nil, 0, false
			}
			return sc.d, off, true
		case tagEnumerationType:
			if di.decl || !f.enums {
				return nil, 0, false
			}
			return sc.d, off, true
		case tagTypedef, tagConstType, tagVolatileType:
			off = di.typ
			if di.typPart != nil && di.typPart != sc.d {
				sc = &scanner{d: di.typPart}
			}
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// indirect returns the form an attribute is stored in: form itself, or for
// DW_FORM_indirect the form read from the DIE (a second indirection or an
// out-of-range form fails the cursor and returns false).
func (sc *scanner) indirect(form uint32) (uint32, bool) {
	if form != formIndirect {
		return form, true
	}
	f := sc.c.Uleb()
	if f == formIndirect || f > 0xffff {
		sc.c.Fail("DW_FORM_indirect names form %#x", f)
		return 0, false
	}
	return uint32(f), true
}
