package elfread

import (
	"fmt"
	"unsafe"

	"github.com/nrtabi/nrtabi/typemodel"
)

// ref is a DW_AT_type (or DW_AT_containing_type) reference as a combined
// offset; set false when the DIE has none (void).
type ref struct {
	off uint64
	set bool
}

// pending is a node decoded from its DIE whose references are not linked
// yet: the link step (typelink.go) turns the refs into pointers.
type pending struct {
	t      *typemodel.Type
	p      *Debug // the part holding the DIE
	elem   ref
	class  ref
	params []ref
	dims   []int64 // an array's counts, outermost first
	fields []pfield
}

// pfield is a member or base class as its DIE states it; the bitfield
// arithmetic waits for its type's size.
type pfield struct {
	typ                      ref
	loc                      int64
	locRuntime               bool // the location is an expression run at run time (a virtual base)
	bitSize, bitOff, dbitOff int64
	hasBitOff, hasDataBitOff bool
	unitSize                 int64 // DW_AT_byte_size of a DWARF 2/3 bitfield's storage unit
	virtuality               int64
}

// rawDIE is what the front end decodes of one DIE: the attributes any type
// DIE or type child can carry.
type rawDIE struct {
	tag                      uint32
	children                 bool
	name                     []byte
	size                     int64
	sized                    bool
	typ, containing          ref
	decl, external, artif    bool
	prototyped               bool
	virtuality, align        int64
	encoding                 uint64
	bitSize, bitOff, dbitOff int64
	hasBitOff, hasDataBitOff bool
	loc                      int64
	hasLoc, locRuntime       bool
	constVal                 int64
	constUnsigned, hasConst  bool
	upper, count, lower      int64
	hasUpper, hasCount       bool
	declFile, declLine       uint64
	sibling                  int
	spec                     int   // DW_AT_specification in the unit (0: none)
	stub                     bool  // DW_AT_signature: a stub of a type unit's type
	err                      error // a reference the front end cannot follow
}

// flag reads a flag form's value.
func (sc *scanner) flag(form uint32) bool {
	return form == formFlagPresent || sc.readUint(form) != 0
}

// constant reads a constant form; ok is false for any other form (which
// is stepped over). unsigned: the form carries no sign.
func (sc *scanner) constant(form uint32, as *attrSpec) (v int64, unsigned, ok bool) {
	switch form {
	case formData1, formData2, formData4, formData8, formUdata:
		return int64(sc.readUint(form)), true, true
	case formSdata:
		return sc.c.Sleb(), false, true
	case formImplicitConst:
		return int64(as.implicit), false, true
	}
	sc.skipForm(form)
	return 0, false, false
}

// location reads DW_AT_data_member_location: a constant, or an
// expression of DW_OP_plus_uconst (or DW_OP_constu) alone; any other
// expression is computed at run time.
func (sc *scanner) location(form uint32, as *attrSpec) (v int64, runtime, ok bool) {
	var n uint64
	switch form {
	case formExprloc, formBlock:
		n = sc.c.Uleb()
	case formBlock1:
		n = sc.c.Uint(1)
	case formBlock2:
		n = sc.c.Uint(2)
	case formBlock4:
		n = sc.c.Uint(4)
	default:
		v, _, ok := sc.constant(form, as)
		return v, false, ok
	}
	if n == 0 || sc.c.Err() != nil {
		sc.c.Skip(n)
		return 0, false, false
	}
	if n > uint64(sc.c.Left()) {
		sc.c.Skip(n) // fails the cursor
		return 0, false, false
	}
	end := sc.c.Off() + int(n)
	op := sc.c.U8()
	if op == opPlusUconst || op == opConstu {
		x := sc.c.Uleb()
		if sc.c.Err() == nil && sc.c.Off() == end {
			return int64(min(x, typemodel.MaxSize)), false, true
		}
	}
	if sc.c.Err() == nil {
		sc.c.Seek(end)
	}
	return 0, true, true
}

// typeRef reads a reference form as a combined offset: within the unit,
// within the part's .debug_info (ref_addr), or in the supplementary file
// (DW_FORM_GNU_ref_alt, DW_FORM_ref_sup4/8).
func (sc *scanner) typeRef(form uint32) (ref, error) {
	p := sc.d
	switch form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata:
		v := sc.readUint(form)
		if v >= uint64(sc.u.end-sc.u.off) {
			return ref{}, fmt.Errorf("a reference to %#x runs past its unit (at %#x, %d bytes)", v, sc.u.off, sc.u.end-sc.u.off)
		}
		// A stub of a type unit's type is that type (typeunits.go).
		if off, ok, err := sc.stubTarget(sc.u.off + int(v)); ok || err != nil {
			return ref{off, ok}, err
		}
		return ref{uint64(p.base + sc.u.off + int(v)), true}, nil
	case formRefAddr:
		n := sc.u.offSize
		if sc.u.version <= 2 {
			n = sc.u.addrSize
		}
		v := sc.c.Uint(n)
		if v >= uint64(len(p.info)) {
			return ref{}, fmt.Errorf("a reference to %#x runs past .debug_info (%d bytes)", v, len(p.info))
		}
		return ref{uint64(p.base) + v, true}, nil
	case formGNURefAlt, formRefSup4, formRefSup8:
		v := sc.readUint(form)
		if p.alt == nil {
			if p.altMissing != "" {
				return ref{}, &MissingPartError{Part: p.altMissing, Off: v}
			}
			return ref{}, fmt.Errorf("a type in the supplementary file (%#x), which the file names no .gnu_debugaltlink or .debug_sup for", v)
		}
		if v >= uint64(len(p.alt.info)) {
			return ref{}, fmt.Errorf("a reference to %#x runs past the supplementary file's .debug_info (%d bytes)", v, len(p.alt.info))
		}
		return ref{uint64(p.alt.base) + v, true}, nil
	case formRefSig8:
		off, err := sc.sigTarget(sc.readUint(form))
		if err != nil {
			return ref{}, err
		}
		return ref{off, true}, nil
	}
	sc.skipForm(form)
	return ref{}, fmt.Errorf("a type reference in form %#x", form)
}

// readDIE decodes the attributes of a DIE whose abbreviation is a, leaving
// the cursor after them.
func (sc *scanner) readDIE(a *abbrev) rawDIE {
	r := rawDIE{tag: a.tag, children: a.children}
	for i := range a.attrs {
		as := &a.attrs[i]
		form, ok := sc.indirect(as.form)
		if !ok {
			return r
		}
		var err error
		switch as.attr {
		case attrName:
			r.name = sc.nameOf(form)
		case attrByteSize:
			v, _, ok := sc.constant(form, as)
			if ok {
				r.size, r.sized = min(max(v, 0), typemodel.MaxSize), true
			}
		case attrType:
			r.typ, err = sc.typeRef(form)
		case attrContainingType:
			r.containing, err = sc.typeRef(form)
		case attrDeclaration:
			r.decl = sc.flag(form)
		case attrExternal:
			r.external = sc.flag(form)
		case attrArtificial:
			r.artif = sc.flag(form)
		case attrPrototyped:
			r.prototyped = sc.flag(form)
		case attrVirtuality:
			r.virtuality, _, _ = sc.constant(form, as)
		case attrAlignment:
			v, _, _ := sc.constant(form, as)
			r.align = min(max(v, 0), typemodel.MaxSize)
		case attrEncoding:
			v, _, _ := sc.constant(form, as)
			r.encoding = uint64(v)
		case attrBitSize:
			r.bitSize, _, _ = sc.constant(form, as)
			r.bitSize = min(max(r.bitSize, 0), typemodel.MaxSize)
		case attrBitOffset:
			r.bitOff, _, r.hasBitOff = sc.constant(form, as)
		case attrDataBitOffset:
			r.dbitOff, _, r.hasDataBitOff = sc.constant(form, as)
		case attrDataMemberLoc:
			r.loc, r.locRuntime, r.hasLoc = sc.location(form, as)
		case attrConstValue:
			r.constVal, r.constUnsigned, r.hasConst = sc.constant(form, as)
		case attrUpperBound:
			r.upper, _, r.hasUpper = sc.constant(form, as)
		case attrCount:
			r.count, _, r.hasCount = sc.constant(form, as)
		case attrLowerBound:
			r.lower, _, _ = sc.constant(form, as)
		case attrDeclFile:
			v, _, _ := sc.constant(form, as)
			r.declFile = uint64(v)
		case attrDeclLine:
			v, _, _ := sc.constant(form, as)
			r.declLine = uint64(v)
		case attrSibling:
			r.sibling, _ = sc.refOf(form)
		case attrSpecification:
			r.spec, _ = sc.refOf(form)
		case attrSignature:
			r.stub = true
			sc.skipForm(form)
		default:
			if as.fixed >= 0 && form == as.form {
				sc.c.Skip(uint64(as.fixed))
			} else {
				sc.skipForm(form)
			}
		}
		if err != nil && r.err == nil {
			r.err = err
		}
	}
	return r
}

// typeTag: the DIE is a type the model has a kind for.
func typeKind(tag uint32) (typemodel.Kind, bool) {
	switch tag {
	case tagBaseType:
		return typemodel.Base, true
	case tagEnumerationType:
		return typemodel.Enum, true
	case tagStructType:
		return typemodel.Struct, true
	case tagClassType:
		return typemodel.Class, true
	case tagUnionType:
		return typemodel.Union, true
	case tagPointerType:
		return typemodel.Pointer, true
	case tagReferenceType:
		return typemodel.Reference, true
	case tagRvalueRefType:
		return typemodel.RvalueReference, true
	case tagPtrToMemberType:
		return typemodel.PtrToMember, true
	case tagArrayType:
		return typemodel.Array, true
	case tagSubroutineType:
		return typemodel.Func, true
	case tagTypedef:
		return typemodel.Typedef, true
	case tagConstType:
		return typemodel.Const, true
	case tagVolatileType:
		return typemodel.Volatile, true
	case tagRestrictType:
		return typemodel.Restrict, true
	case tagAtomicType:
		return typemodel.Atomic, true
	case tagUnspecifiedType:
		return typemodel.Unspecified, true
	}
	return typemodel.Invalid, false
}

func clampU32(v uint64) uint32 { return uint32(min(v, 1<<32-1)) }

// skipChildren moves past the children of a DIE whose attributes were
// just read (the cursor is at its first child), by sibling pointers where
// the producer left them.
func (sc *scanner) skipChildren() {
	depth := 1
	for depth > 0 && sc.c.Left() > 0 && sc.failed() == nil {
		code := sc.c.Uleb()
		if code == 0 {
			depth--
			continue
		}
		a := sc.abbrevAt(code)
		if a == nil {
			return
		}
		if sc.passOver(a, sc.u.end) {
			if depth++; depth > maxScopeDepth {
				sc.c.Fail("DIEs nest more than %d deep", maxScopeDepth)
				return
			}
		}
	}
	if depth > 0 && sc.failed() == nil {
		sc.c.Fail("the children of a DIE run past the end of its unit")
	}
}

// skipSubtree moves past the children of a DIE whose attributes di were
// just read, by its sibling pointer when it has a usable one.
func (sc *scanner) skipSubtree(di *dieInfo) {
	if !di.children {
		return
	}
	if di.sibling > sc.c.Off() && di.sibling <= sc.u.end {
		sc.c.Seek(di.sibling)
		return
	}
	sc.skipChildren()
}

// decodeType decodes the type DIE at the cursor (off, the combined offset,
// names it) and the children its kind has (members, enumerators,
// subranges, parameters), skipping every other child subtree; the cursor
// ends past the DIE's subtree. qual is the DIE's scope ("a::b", "" at the
// top). count is called once per DIE decoded (the decode-once hook).
func (sc *scanner) decodeType(off uint64, qual string, count func(uint64)) (*pending, error) {
	code := sc.c.Uleb()
	if code == 0 {
		if err := sc.failed(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no DIE at %#x (a null entry)", off)
	}
	a := sc.abbrevAt(code)
	if a == nil {
		return nil, sc.failed()
	}
	count(off)
	r := sc.readDIE(a)
	if err := sc.failed(); err != nil {
		return nil, err
	}
	kind, ok := typeKind(r.tag)
	if !ok {
		return nil, fmt.Errorf("DIE at %#x is a %s, not a type", off, tagWord(r.tag))
	}
	if r.err != nil {
		return nil, fmt.Errorf("the type at DIE %#x: %w", off, r.err)
	}
	if r.stub {
		// Every reference to a stub is taken to its type unit's type
		// (typeRef): only a crafted one reaches here.
		return nil, fmt.Errorf("DIE at %#x is a stub of a type unit's type, which no reference was taken through", off)
	}
	if r.spec != 0 && sc.u.typeUnit && !cLanguage(sc.lang) {
		// A type unit's definition at its top takes the scope of its
		// declaration (typeunits.go).
		qual, _ = sc.specQual(r.spec)
	}
	t := sc.newType()
	*t = typemodel.Type{Kind: kind, Size: r.size, HasSize: r.sized, Align: r.align, Declaration: r.decl,
		Encoding: typemodel.Encoding(min(r.encoding, 0xff)), Count: -1, Prototyped: r.prototyped, Offset: off,
		DeclFile: clampU32(r.declFile), DeclLine: clampU32(r.declLine)}
	if len(r.name) > 0 {
		t.Name = sc.str2(r.name)
		switch kind {
		case typemodel.Struct, typemodel.Class, typemodel.Union, typemodel.Enum, typemodel.Typedef:
			t.Name = qualify(qual, t.Name)
		}
	}
	switch kind {
	case typemodel.Pointer, typemodel.Reference, typemodel.RvalueReference:
		if !r.sized {
			t.Size, t.HasSize = int64(sc.u.addrSize), true
		}
	}
	pd := sc.newPending()
	*pd = pending{t: t, p: sc.d, elem: r.typ, class: r.containing}
	if !r.children {
		return pd, nil
	}
	base := uint64(sc.d.base)
	sc.fieldBuf, sc.pfieldBuf, sc.enumBuf = sc.fieldBuf[:0], sc.pfieldBuf[:0], sc.enumBuf[:0]
	for sc.c.Left() > 0 && sc.failed() == nil {
		at := uint64(sc.c.Off()) + base
		code := sc.c.Uleb()
		if code == 0 {
			// The children were gathered in the scanner's scratch lists:
			// each node gets lists of exactly its length (a library's
			// millions of members would otherwise carry their append
			// slack for the life of the graph).
			if len(sc.fieldBuf) > 0 {
				t.Fields = sc.fieldsOf(sc.fieldBuf)
				pd.fields = sc.pfields(sc.pfieldBuf)
			}
			if len(sc.enumBuf) > 0 {
				t.Enumerators = sc.enumeratorsOf(sc.enumBuf)
			}
			return pd, sc.failed()
		}
		ka := sc.abbrevAt(code)
		if ka == nil {
			break
		}
		wanted := false
		switch kind {
		case typemodel.Struct, typemodel.Class, typemodel.Union:
			wanted = ka.tag == tagMember || ka.tag == tagInheritance
		case typemodel.Enum:
			wanted = ka.tag == tagEnumerator
		case typemodel.Array:
			wanted = ka.tag == tagSubrangeType
		case typemodel.Func:
			wanted = ka.tag == tagFormalParameter || ka.tag == tagUnspecifiedParams
		}
		if !wanted {
			if sc.nested != nil && ka.named {
				sc.nestedDef(ka, 2)
			} else if sc.passOver(ka, sc.u.end) {
				sc.skipChildren()
			}
			continue
		}
		count(at)
		k := sc.readDIE(ka)
		if err := sc.failed(); err != nil {
			return nil, err
		}
		if k.children {
			sc.skipChildren()
		}
		if k.err != nil && (ka.tag == tagMember || ka.tag == tagInheritance || ka.tag == tagFormalParameter) {
			return nil, fmt.Errorf("the child at DIE %#x of the type at DIE %#x: %w", at, off, k.err)
		}
		switch ka.tag {
		case tagMember, tagInheritance:
			if k.decl || k.external && ka.tag == tagMember {
				continue // a C++ static data member
			}
			if !k.typ.set {
				return nil, fmt.Errorf("member %q at DIE %#x has no type", k.name, at)
			}
			sc.fieldBuf = append(sc.fieldBuf, typemodel.Field{Name: sc.str2(k.name), Base: ka.tag == tagInheritance, Artificial: k.artif,
				Offset: k.loc, DeclLine: clampU32(k.declLine)})
			sc.pfieldBuf = append(sc.pfieldBuf, pfield{typ: k.typ, loc: k.loc, locRuntime: k.locRuntime, bitSize: k.bitSize,
				bitOff: k.bitOff, hasBitOff: k.hasBitOff, dbitOff: k.dbitOff, hasDataBitOff: k.hasDataBitOff,
				unitSize: k.size, virtuality: k.virtuality})
		case tagEnumerator:
			sc.enumBuf = append(sc.enumBuf, typemodel.Enumerator{Name: sc.str2(k.name), Value: k.constVal, Unsigned: k.constUnsigned})
		case tagSubrangeType:
			n := int64(-1)
			switch {
			case k.hasCount:
				n = k.count
			case k.hasUpper:
				n = k.upper - k.lower + 1
			}
			if n < 0 {
				n = -1
			}
			if len(pd.dims) >= typemodel.MaxDepth {
				return nil, fmt.Errorf("the array at DIE %#x has more than %d dimensions", off, typemodel.MaxDepth)
			}
			pd.dims = append(pd.dims, n)
		case tagFormalParameter:
			if !k.typ.set {
				return nil, fmt.Errorf("parameter at DIE %#x has no type", at)
			}
			if len(pd.params) >= maxParams {
				return nil, fmt.Errorf("the function type at DIE %#x has more than %d parameters", off, maxParams)
			}
			if len(pd.params) == 0 && k.artif {
				t.ObjectParam = true // a member function's this
			}
			pd.params = append(pd.params, k.typ)
		case tagUnspecifiedParams:
			t.Variadic = true
		}
	}
	if err := sc.failed(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the children of the type at DIE %#x run past the end of its unit", off)
}

// str2 is a name as a string, one copy per scanner however many DIEs
// spell it (every unit of a C library repeats "int", "size_t", member
// names of its headers' structs).
func (sc *scanner) str2(b []byte) string {
	// A name's bytes are in a section the scanner's Debug holds (the
	// string table, or .debug_info for DW_FORM_string) and do not change
	// while it is open, so the same place and length is the same name: a
	// direct-mapped table by place answers most lookups with one compare,
	// where hashing the name was a twentieth of the graph's build of a
	// member-dense object (docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07).
	// The place is only compared, never turned back into a pointer.
	// A short name is left to the map: gcc writes names shorter than a
	// string offset in place (DW_FORM_string), each at a place of its
	// own, where the table would only miss, and hashing them is cheap.
	if sc.byPlace == nil || len(b) < placeMin {
		return sc.interned(b)
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	slot := &sc.byPlace[(p^p>>11)%nameSlots]
	if slot.at != p || len(slot.s) != len(b) {
		*slot = nameSlot{at: p, s: sc.interned(b)}
	}
	return slot.s
}

// interned is b as the scanner's one copy of that string.
func (sc *scanner) interned(b []byte) string {
	if sc.names == nil {
		sc.names = map[string]string{}
	}
	if sc.spelled++; sc.spelled == nameCacheAfter {
		sc.byPlace = new([nameSlots]nameSlot)
	}
	if s, ok := sc.names[string(b)]; ok {
		return s
	}
	s := string(b)
	sc.names[s] = s
	return s
}

// nameSlot is one entry of str2's table: a name and where its bytes are.
type nameSlot struct {
	at uintptr
	s  string
}

// nameSlots is the size of str2's table (24 bytes each); nameCacheAfter
// how many names a scanner spells before it makes one, so that a quick
// lookup (show of one struct) does not pay for it; placeMin the shortest
// name it holds.
const (
	nameSlots      = 4096
	nameCacheAfter = 512
	placeMin       = 8
)

// maxParams bounds a function type's parameter list (C allows 127).
const maxParams = 1 << 12

func tagWord(tag uint32) string {
	switch tag {
	case 0x34:
		return "variable"
	case 0x2e:
		return "subprogram"
	case tagMember:
		return "member"
	case tagNamespace:
		return "namespace"
	case tagCompileUnit:
		return "compile unit"
	}
	return fmt.Sprintf("DIE of tag %#x", tag)
}
