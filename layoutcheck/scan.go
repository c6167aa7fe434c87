package layoutcheck

import (
	"bytes"
	"debug/dwarf"
	"fmt"
	"sort"
	"strings"
)

// unit is one unit header of .debug_info.
type unit struct {
	off, dieStart, end int
	version            int
	addrSize, offSize  int
	abbrevOff          uint64
	typeUnit           bool
}

type attrSpec struct {
	attr, form uint32
	fixed      int32 // encoded size when fixed, else -1
}

type abbrev struct {
	tag      uint32
	children bool
	attrs    []attrSpec
	fixed    int // total encoded size when every form is fixed, else -1
	named    bool
	sibling  bool
}

type abbrevSlot struct {
	key   abbrevKey
	valid bool
	tab   []abbrev
	attrs []attrSpec
}

type abbrevKey struct {
	off                        uint64
	version, addrSize, offSize int
}

// scanner finds the DIEs of wanted types by name without decoding anything
// else.
type scanner struct {
	d *Debug
	// Two reusable abbreviation tables: the unit being scanned, and the unit
	// a typedef's target is peeked in. gcc writes one table per unit, so
	// caching them all would only grow the heap.
	slots [2]abbrevSlot

	// per unit
	u          *unit
	tab        []abbrev
	strOffBase uint64
}

// parseUnit reads the unit header at off.
func (d *Debug) parseUnit(off int) (unit, error) {
	b := d.info
	bo := d.order
	if off+4 > len(b) {
		return unit{}, fmt.Errorf("unit header at %#x is cut off", off)
	}
	u := unit{off: off, offSize: 4}
	length := uint64(bo.Uint32(b[off:]))
	p := off + 4
	if length == 0xffffffff {
		if p+8 > len(b) {
			return unit{}, fmt.Errorf("unit header at %#x is cut off", off)
		}
		length = bo.Uint64(b[p:])
		p += 8
		u.offSize = 8
	}
	if length > uint64(len(b)-p) || length < 7 {
		return unit{}, fmt.Errorf("unit at %#x claims %d bytes; the section has %d left", off, length, len(b)-p)
	}
	u.end = p + int(length)
	u.version = int(bo.Uint16(b[p:]))
	p += 2
	readOff := func() uint64 {
		if u.offSize == 8 {
			v := bo.Uint64(b[p:])
			p += 8
			return v
		}
		v := uint64(bo.Uint32(b[p:]))
		p += 4
		return v
	}
	switch {
	case u.version >= 2 && u.version <= 4:
		u.abbrevOff = readOff()
		u.addrSize = int(b[p])
		p++
	case u.version == 5:
		ut := b[p]
		u.addrSize = int(b[p+1])
		p += 2
		u.abbrevOff = readOff()
		switch ut {
		case unitTypeSkeleton, unitTypeSplitCompile:
			p += 8
		case unitTypeType, unitTypeSplitType:
			p += 8
			readOff()
			u.typeUnit = true
		}
	default:
		return unit{}, fmt.Errorf("unit at %#x has DWARF version %d; versions 2 to 5 are understood", off, u.version)
	}
	if p > u.end {
		return unit{}, fmt.Errorf("unit header at %#x is cut off", off)
	}
	u.dieStart = p
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
		nu, err := d.parseUnit(next)
		if err != nil {
			return nil, false, inputErr(d.File.Path, "corrupted DWARF: %v", err)
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

// abbrevAt is the abbreviation of a DIE code; an unknown code is corruption.
func (sc *scanner) abbrevAt(code uint64) *abbrev {
	if code >= uint64(len(sc.tab)) || sc.tab[code].fixed == -2 {
		panic(fmt.Sprintf("DIE uses abbreviation code %d, which the unit's table does not define", code))
	}
	return &sc.tab[code]
}

func uleb(b []byte, p int) (uint64, int) {
	var v uint64
	var shift uint
	for {
		c := b[p]
		p++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, p
		}
		shift += 7
	}
}

func skipLeb(b []byte, p int) int {
	for b[p] >= 0x80 {
		p++
	}
	return p + 1
}

// abbrevTable parses (once per offset and unit shape) an abbreviation table
// into a dense slice indexed by code, all attributes in one backing array.
func (sc *scanner) abbrevTable(u *unit, slot int) []abbrev {
	key := abbrevKey{u.abbrevOff, u.version, u.addrSize, u.offSize}
	sl := &sc.slots[slot]
	if sl.valid && sl.key == key {
		return sl.tab
	}
	sl.valid = false
	b := sc.d.abbrev
	p := int(u.abbrevOff)
	tab := sl.tab[:0]
	all := sl.attrs[:0]
	type span struct{ code, from, to int }
	var spans []span
	for {
		code, np := uleb(b, p)
		p = np
		if code == 0 {
			break
		}
		if code > 1<<20 {
			panic(fmt.Sprintf("abbrev code %d at .debug_abbrev+%#x", code, p))
		}
		tag, np := uleb(b, p)
		p = np
		a := abbrev{tag: uint32(tag), children: b[p] != 0}
		p++
		switch a.tag {
		case tagStructType, tagClassType, tagUnionType, tagTypedef, tagNamespace:
			a.named = true
		}
		from := len(all)
		for {
			at, np := uleb(b, p)
			fm, np2 := uleb(b, np)
			p = np2
			if at == 0 && fm == 0 {
				break
			}
			if fm == formImplicitConst {
				p = skipLeb(b, p)
			}
			fs := fixedFormSize(uint32(fm), u.version, u.addrSize, u.offSize)
			all = append(all, attrSpec{attr: uint32(at), form: uint32(fm), fixed: int32(fs)})
			if at == attrSibling {
				a.sibling = true
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
		spans = append(spans, span{int(code), from, len(all)})
	}
	for _, sp := range spans {
		tab[sp.code].attrs = all[sp.from:sp.to:sp.to]
	}
	sl.key, sl.valid, sl.tab, sl.attrs = key, true, tab, all
	return tab
}

// skipForm returns the position after a value of the form.
func (sc *scanner) skipForm(form uint32, b []byte, p int) int {
	switch form {
	case formString:
		i := bytes.IndexByte(b[p:], 0)
		if i < 0 {
			panic("unterminated string")
		}
		return p + i + 1
	case formSdata, formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx, formGNUAddrIndex, formGNUStrIndex:
		return skipLeb(b, p)
	case formBlock1:
		return p + 1 + int(b[p])
	case formBlock2:
		return p + 2 + int(sc.d.order.Uint16(b[p:]))
	case formBlock4:
		return p + 4 + int(sc.d.order.Uint32(b[p:]))
	case formBlock, formExprloc:
		n, np := uleb(b, p)
		return np + int(n)
	case formIndirect:
		f, np := uleb(b, p)
		return sc.skipForm(uint32(f), b, np)
	}
	if n := fixedFormSize(form, sc.u.version, sc.u.addrSize, sc.u.offSize); n >= 0 {
		return p + n
	}
	panic(fmt.Sprintf("unknown attribute form %#x", form))
}

func (sc *scanner) skipAttrs(a *abbrev, b []byte, p int) int {
	if a.fixed >= 0 {
		return p + a.fixed
	}
	for i := range a.attrs {
		if f := a.attrs[i].fixed; f >= 0 {
			p += int(f)
		} else {
			p = sc.skipForm(a.attrs[i].form, b, p)
		}
	}
	return p
}

// readUint reads an unsigned value of a fixed-size or LEB form.
func (sc *scanner) readUint(form uint32, b []byte, p int) uint64 {
	bo := sc.d.order
	switch form {
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return uint64(b[p])
	case formData2, formRef2, formStrx2, formAddrx2:
		return uint64(bo.Uint16(b[p:]))
	case formStrx3, formAddrx3:
		return uint64(b[p]) | uint64(b[p+1])<<8 | uint64(b[p+2])<<16
	case formData4, formRef4, formStrx4, formAddrx4, formRefSup4:
		return uint64(bo.Uint32(b[p:]))
	case formData8, formRef8, formRefSup8, formRefSig8:
		return bo.Uint64(b[p:])
	case formUdata, formRefUdata, formStrx, formAddrx, formGNUStrIndex:
		v, _ := uleb(b, p)
		return v
	case formStrp, formSecOffset, formLineStrp, formStrpSup, formRefAddr:
		if sc.u.offSize == 8 {
			return bo.Uint64(b[p:])
		}
		return uint64(bo.Uint32(b[p:]))
	case formFlagPresent:
		return 1
	}
	return 0
}

func cstr(b []byte, off uint64) []byte {
	if off >= uint64(len(b)) {
		panic(fmt.Sprintf("string offset %#x outside a %d-byte string table", off, len(b)))
	}
	s := b[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// nameOf decodes a name attribute value without copying.
func (sc *scanner) nameOf(form uint32, b []byte, p int) []byte {
	switch form {
	case formString:
		return cstr(b, uint64(p))
	case formStrp:
		return cstr(sc.d.str, sc.readUint(form, b, p))
	case formLineStrp:
		return cstr(sc.d.lineStr, sc.readUint(form, b, p))
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex:
		idx := sc.readUint(form, b, p)
		at := sc.strOffBase + idx*uint64(sc.u.offSize)
		so := sc.d.strOffsets
		if at+uint64(sc.u.offSize) > uint64(len(so)) {
			panic("string index outside .debug_str_offsets")
		}
		var off uint64
		if sc.u.offSize == 8 {
			off = sc.d.order.Uint64(so[at:])
		} else {
			off = uint64(sc.d.order.Uint32(so[at:]))
		}
		return cstr(sc.d.str, off)
	}
	return nil
}

// refOf turns a reference value into a section offset.
func (sc *scanner) refOf(form uint32, b []byte, p int) (int, bool) {
	switch form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata:
		return sc.u.off + int(sc.readUint(form, b, p)), true
	case formRefAddr:
		return int(sc.readUint(form, b, p)), true
	}
	return 0, false
}

// dieInfo is what the scanner decodes of a named DIE.
type dieInfo struct {
	name     []byte
	decl     bool
	sibling  int // 0 when absent
	typ      int // referenced type, 0 when absent
	export   bool
	children bool
	tag      uint32
}

func (sc *scanner) decode(a *abbrev, b []byte, p int) (dieInfo, int) {
	di := dieInfo{children: a.children, tag: a.tag}
	for i := range a.attrs {
		as := &a.attrs[i]
		form := as.form
		if form == formIndirect {
			f, np := uleb(b, p)
			form, p = uint32(f), np
		}
		switch as.attr {
		case attrName:
			di.name = sc.nameOf(form, b, p)
		case attrDeclaration:
			di.decl = form == formFlagPresent || sc.readUint(form, b, p) != 0
		case attrSibling:
			di.sibling, _ = sc.refOf(form, b, p)
		case attrType:
			di.typ, _ = sc.refOf(form, b, p)
		case attrExportSymbols:
			di.export = form == formFlagPresent || sc.readUint(form, b, p) != 0
		}
		if as.fixed >= 0 && form == as.form {
			p += int(as.fixed)
		} else {
			p = sc.skipForm(form, b, p)
		}
	}
	return di, p
}

// Found is where a wanted struct was found in the DWARF.
type Found struct {
	Offset dwarf.Offset // the struct, class or union DIE
	Name   string       // its qualified DWARF name
	Via    string       // "struct TAG" or "typedef NAME"
}

type wantName struct {
	parts  []string // qualified name split at "::"
	target int      // index of the wanted struct
}

// Finder looks up structs by name in one Debug.
type Finder struct {
	sc      *scanner
	byBase  map[string][]wantName
	found   []*Found
	missing int
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

// FindStructs locates each wanted struct, trying its names in order; the
// result has one entry per want (nil when absent).
func (d *Debug) FindStructs(wants [][]string) (found []*Found, err error) {
	f := &Finder{sc: &scanner{d: d}, byBase: map[string][]wantName{}}
	f.found = make([]*Found, len(wants))
	f.missing = len(wants)
	for i, names := range wants {
		for _, n := range names {
			parts := splitQualified(n)
			f.byBase[baseName(parts[len(parts)-1])] = append(f.byBase[baseName(parts[len(parts)-1])], wantName{parts: parts, target: i})
		}
	}
	defer func() {
		if r := recover(); r != nil {
			found, err = nil, inputErr(d.Path(), "corrupted DWARF in .debug_info (%v)", r)
		}
	}()
	for i := 0; f.missing > 0; i++ {
		u, ok, err := d.unit(i)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		f.scanUnit(u)
	}
	return f.found, nil
}

type scope struct {
	scan  bool
	names []string // enclosing namespaces (inline ones left out)
}

func (f *Finder) scanUnit(u *unit) {
	sc := f.sc
	if u.typeUnit {
		return
	}
	sc.u = u
	sc.tab = sc.abbrevTable(u, 0)
	sc.strOffBase = 8
	if u.offSize == 8 {
		sc.strOffBase = 16
	}
	b := sc.d.info[:u.end]
	p := u.dieStart
	// The unit DIE: only DW_AT_str_offsets_base matters.
	code, p := uleb(b, p)
	if code == 0 {
		return
	}
	cu := sc.abbrevAt(code)
	for i := range cu.attrs {
		as := &cu.attrs[i]
		if as.attr == attrStrOffsetsBase {
			sc.strOffBase = sc.readUint(as.form, b, p)
		}
		p = sc.skipForm(as.form, b, p)
	}
	if !cu.children {
		return
	}
	stack := []scope{{scan: true}}
	for p < u.end && len(stack) > 0 {
		dieOff := p
		code, np := uleb(b, p)
		p = np
		f.DIEsVisited++
		if code == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		a := sc.abbrevAt(code)
		top := &stack[len(stack)-1]
		if !top.scan || !a.named {
			if !a.children {
				p = sc.skipAttrs(a, b, p)
				continue
			}
			// A subtree that cannot hold a wanted type: jump over it when the
			// producer left a sibling pointer, else walk it without decoding.
			if a.sibling {
				di, np := sc.decode(a, b, p)
				if di.sibling > p {
					p = di.sibling
					continue
				}
				p = np
			} else {
				p = sc.skipAttrs(a, b, p)
			}
			stack = append(stack, scope{})
			continue
		}
		di, np := sc.decode(a, b, p)
		p = np
		if a.tag == tagNamespace {
			names := top.names
			if !di.export && string(di.name) != "__cxx11" {
				names = append(append([]string(nil), top.names...), string(di.name))
			}
			if di.children {
				stack = append(stack, scope{scan: true, names: names})
			}
			continue
		}
		if len(di.name) > 0 {
			f.match(di, top.names, dieOff)
		}
		if f.missing == 0 {
			return
		}
		if di.children {
			if di.sibling > p {
				p = di.sibling
			} else {
				stack = append(stack, scope{})
			}
		}
	}
}

func (f *Finder) match(di dieInfo, scopeNames []string, dieOff int) {
	name := di.name
	base := name
	if i := bytes.IndexByte(name, '<'); i > 0 {
		base = name[:i]
	}
	cands, ok := f.byBase[string(base)]
	if !ok {
		return
	}
	for _, w := range cands {
		if f.found[w.target] != nil || !qualifiedMatch(w.parts, scopeNames, string(name)) {
			continue
		}
		qual := strings.Join(append(append([]string(nil), scopeNames...), string(name)), "::")
		switch di.tag {
		case tagTypedef:
			off, ok := f.resolveTypedef(di.typ)
			if !ok {
				continue
			}
			f.found[w.target] = &Found{Offset: dwarf.Offset(off), Name: qual, Via: "typedef " + qual}
		default:
			if di.decl {
				continue
			}
			f.found[w.target] = &Found{Offset: dwarf.Offset(dieOff), Name: qual, Via: kindWord(di.tag) + " " + qual}
		}
		f.missing--
	}
}

func kindWord(tag uint32) string {
	switch tag {
	case tagClassType:
		return "class"
	case tagUnionType:
		return "union"
	}
	return "struct"
}

// qualifiedMatch compares a wanted qualified name with a DIE name in its
// scope. A wanted template name matches when its arguments are a prefix of
// the DIE's (std::basic_ostringstream<char> names the instance with default
// traits and allocator).
func qualifiedMatch(parts, scopeNames []string, name string) bool {
	if len(parts)-1 != len(scopeNames) {
		return false
	}
	for i, s := range scopeNames {
		if parts[i] != s {
			return false
		}
	}
	want := parts[len(parts)-1]
	if want == name {
		return true
	}
	wi := strings.IndexByte(want, '<')
	ni := strings.IndexByte(name, '<')
	if wi < 0 || ni < 0 || want[:wi] != name[:ni] {
		return false
	}
	wa, na := templateArgs(want[wi:]), templateArgs(name[ni:])
	if len(wa) > len(na) {
		return false
	}
	for i := range wa {
		if wa[i] != na[i] {
			return false
		}
	}
	return true
}

// templateArgs splits "<a, b<c, d> >" into normalised top-level arguments.
func templateArgs(s string) []string {
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

// resolveTypedef follows a typedef's target through typedefs and qualifiers
// to a struct, class or union definition.
func (f *Finder) resolveTypedef(off int) (int, bool) {
	sc := f.sc
	for range 16 {
		if off <= 0 || off >= len(sc.d.info) {
			return 0, false
		}
		u, err := sc.d.unitContaining(off)
		if err != nil {
			return 0, false
		}
		saved, savedTab, savedBase := sc.u, sc.tab, sc.strOffBase
		slot := 1
		if u == saved {
			slot = 0
		}
		sc.u, sc.tab = u, sc.abbrevTable(u, slot)
		b := sc.d.info[:u.end]
		code, p := uleb(b, off)
		if code == 0 || int(code) >= len(sc.tab) || sc.tab[code].fixed == -2 {
			sc.u, sc.tab, sc.strOffBase = saved, savedTab, savedBase
			return 0, false
		}
		a := &sc.tab[code]
		di, _ := sc.decode(a, b, p)
		sc.u, sc.tab, sc.strOffBase = saved, savedTab, savedBase
		switch a.tag {
		case tagStructType, tagClassType, tagUnionType:
			if di.decl {
				return 0, false
			}
			return off, true
		case tagTypedef, tagConstType, tagVolatileType:
			off = di.typ
		default:
			return 0, false
		}
	}
	return 0, false
}
