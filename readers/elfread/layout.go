package elfread

import (
	"debug/dwarf"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// Layout is a struct, class or union as the DWARF lays it out.
type Layout struct {
	Name    string // qualified DWARF name ("" for an anonymous struct)
	Kind    string // struct, class or union
	Size    int64
	Align   int64
	Offset  dwarf.Offset
	Members []*Member
	// Declared: the DIE only declares the type (DW_AT_declaration, or no
	// DW_AT_byte_size): an incomplete type whose layout is elsewhere.
	Declared bool
}

// Member is one data member or base class of a Layout.
type Member struct {
	Name       string
	Offset     int64 // byte offset of the member (of its storage unit for a bitfield)
	Size       int64 // byte size of the member's type
	BitOffset  int64 // bit offset from the start of the struct; bitfields only
	BitSize    int64 // 0 unless a bitfield
	Type       godwarf.Type
	Base       bool // a base class (DW_TAG_inheritance)
	Virtual    bool // a virtual base: no fixed offset
	Artificial bool
}

// End is one past the member's last byte (saturating: offsets and sizes
// come from the input).
func (m *Member) End() int64 {
	if m.BitSize > 0 {
		return SatAdd(m.BitOffset, m.BitSize+7) / 8
	}
	return SatAdd(m.Offset, m.Size)
}

// SatAdd adds two values read from DWARF, saturating at maxTypeSize.
func SatAdd(a, b int64) int64 {
	a, b = min(max(a, -maxTypeSize), maxTypeSize), min(max(b, -maxTypeSize), maxTypeSize)
	return min(a+b, maxTypeSize)
}

// Reader decodes struct layouts from one Debug. Offsets in its API are
// .debug_info section offsets.
type Reader struct {
	d         *Debug
	views     map[int]*view
	dimsFixed map[godwarf.Type]bool
	// parts (the main Debug's reader only) read the supplement and the
	// split units; alt is the supplement's reader, for references into it.
	parts []*Reader
	alt   *Reader
	// merged: the main file and its supplement are read as one DWARF
	// (mergedData), so references between them are plain references.
	merged bool
	// main is the main Debug, whose type graph names base classes.
	main *Debug
}

// view is a debug/dwarf view of one unit (or of the whole section when a unit
// refers across units), with godwarf's type cache. Offsets inside a view are
// relative to base.
type view struct {
	base  dwarf.Offset
	data  *dwarf.Data
	cache map[dwarf.Offset]godwarf.Type
}

// NewReader returns a layout reader; views are built on the first read.
func (d *Debug) NewReader() *Reader {
	r := &Reader{d: d, views: map[int]*view{}, main: d}
	byDebug := map[*Debug]*Reader{}
	r.merged = d.alt != nil && len(d.parts) > 0 && d.parts[0] == d.alt
	for _, p := range d.parts {
		if r.merged && p == d.alt {
			continue // read through the merged view
		}
		pr := &Reader{d: p, views: map[int]*view{}, main: d}
		byDebug[p] = pr
		r.parts = append(r.parts, pr)
	}
	r.alt = byDebug[d.alt]
	for _, pr := range r.parts {
		pr.alt = byDebug[pr.d.alt]
	}
	return r
}

// Types is the type graph of the reader's Debug.
func (r *Reader) Types() *Types { return r.d.Types() }

// Where names the file holding a DIE of the combined offset space and the
// DIE's offset in that file's .debug_info.
func (r *Reader) Where(off dwarf.Offset) (path string, local dwarf.Offset) {
	for _, p := range append([]*Debug{r.d}, r.d.parts...) {
		if int(off) >= p.base && int(off) < p.base+len(p.info) {
			return p.Path(), off - dwarf.Offset(p.base)
		}
	}
	return r.d.Path(), off
}

// route finds the reader of the part holding a combined offset, and the
// offset inside that part.
func (r *Reader) route(off dwarf.Offset) (*Reader, dwarf.Offset) {
	for _, p := range r.parts {
		if int(off) >= p.d.base && int(off) < p.d.base+len(p.d.info) {
			return p, off - dwarf.Offset(p.d.base)
		}
	}
	return r, off
}

// viewFor returns the view holding off. A unit without cross-unit references
// gets a view of its own bytes, so debug/dwarf parses one unit's
// abbreviations instead of every unit's.
func (r *Reader) viewFor(off dwarf.Offset) (*view, error) {
	if r.merged {
		if v, ok := r.views[-2]; ok {
			return v, nil
		}
		data, err := r.d.mergedView()
		if err != nil {
			return nil, err
		}
		v := &view{data: data, cache: map[dwarf.Offset]godwarf.Type{}}
		r.views[-2] = v
		return v, nil
	}
	u, err := r.d.unitContaining(int(off))
	if err != nil {
		return nil, err
	}
	if v, ok := r.views[u.off]; ok {
		return v, nil
	}
	if v, ok := r.views[-1]; ok {
		return v, nil
	}
	if r.d.crossUnitRefs(u) {
		data, err := r.d.DWARFData()
		if err != nil {
			return nil, err
		}
		v := &view{data: data, cache: map[dwarf.Offset]godwarf.Type{}}
		r.views[-1] = v
		return v, nil
	}
	data, err := r.d.unitData(u)
	if err != nil {
		return nil, err
	}
	v := &view{base: dwarf.Offset(u.off), data: data, cache: map[dwarf.Offset]godwarf.Type{}}
	r.views[u.off] = v
	return v, nil
}

// GlobalOffset is the section offset of a type read by this reader.
func (r *Reader) GlobalOffset(t godwarf.Type) dwarf.Offset {
	c := t.Common()
	for _, pr := range append([]*Reader{r}, r.parts...) {
		for _, v := range pr.views {
			if v.cache[c.Offset] == t {
				return dwarf.Offset(pr.d.base) + v.base + c.Offset
			}
		}
	}
	return c.Offset
}

// Type reads the type at off through godwarf.
func (r *Reader) Type(off dwarf.Offset) (t godwarf.Type, err error) {
	if pr, lo := r.route(off); pr != r {
		return pr.Type(lo)
	}
	v, err := r.viewFor(off)
	if err != nil {
		return nil, err
	}
	t, err = ReadType(v.data, off-v.base, v.cache)
	if err == nil {
		r.fixDims(t, 0)
	}
	return t, err
}

// ReadType is the one door into godwarf's type reader. godwarf follows a
// DIE's children with dwarf.Reader.Next and dereferences the entry without
// checking for the nil that Next returns at the end of the data, so a child
// list that runs past its unit (corrupted DWARF; our scanner stops early and
// never walks the whole unit) panics inside it. That one library fault is
// turned into an error here; our own code has no recover.
//
// godwarf also recurses once per type it has not read yet, so a chain of a
// few million distinct types (a 12 MB crafted object) exhausts the
// goroutine's stack, which no recover catches: typeNesting walks the same
// graph first, without recursion, and refuses one that nests too deep.
func ReadType(d *dwarf.Data, off dwarf.Offset, cache map[dwarf.Offset]godwarf.Type) (t godwarf.Type, err error) {
	if err := typeNesting(d, off, cache); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("the type at DIE 0x%x is malformed (its children run past the end of its unit): %v", off, r)
		}
	}()
	return godwarf.ReadType(d, 0, off, cache)
}

// fixDims puts the dimensions of a multi-dimensional array in C order.
// One DW_TAG_array_type with subranges [5][2][1] reaches us from godwarf
// (as from debug/dwarf) as [5][1][2]: each further subrange is inserted
// right under the first. The inserted arrays are the ones without a DIE
// offset; their counts are reversed once per array (r.dimsFixed). Walks
// pointers, qualifiers, typedefs and function types, not struct bodies
// (their members are read through Type one by one).
func (r *Reader) fixDims(t godwarf.Type, depth int) {
	if t == nil || depth > MaxTypeDepth {
		return
	}
	if r.dimsFixed == nil {
		r.dimsFixed = map[godwarf.Type]bool{}
	}
	if r.dimsFixed[t] {
		return
	}
	r.dimsFixed[t] = true
	switch x := t.(type) {
	case *godwarf.ArrayType:
		var run []*godwarf.ArrayType
		e := x.Type
		for len(run) < MaxTypeDepth {
			a, ok := e.(*godwarf.ArrayType)
			if !ok || a.Offset != 0 {
				break
			}
			run = append(run, a)
			e = a.Type
		}
		for i, j := 0, len(run)-1; i < j; i, j = i+1, j-1 {
			run[i].Count, run[j].Count = run[j].Count, run[i].Count
		}
		r.fixDims(e, depth+1)
	case *godwarf.PtrType:
		r.fixDims(x.Type, depth+1)
	case *godwarf.QualType:
		r.fixDims(x.Type, depth+1)
	case *godwarf.TypedefType:
		r.fixDims(x.Type, depth+1)
	case *godwarf.FuncType:
		r.fixDims(x.ReturnType, depth+1)
		for _, p := range x.ParamType {
			r.fixDims(p, depth+1)
		}
	}
}

// Layout reads the struct at off: godwarf gives the member types; the member
// positions are read here because godwarf skips base classes and DWARF 4/5
// DW_AT_data_bit_offset bitfields.
func (r *Reader) Layout(off dwarf.Offset) (l *Layout, err error) {
	if pr, lo := r.route(off); pr != r {
		l, err := pr.Layout(lo)
		if l != nil {
			l.Offset = off
		}
		return l, err
	}
	v, err := r.viewFor(off)
	if err != nil {
		return nil, err
	}
	rd := v.data.Reader()
	rd.Seek(off - v.base)
	e, err := rd.Next()
	if err != nil {
		return nil, err
	}
	if e == nil || e.Offset != off-v.base {
		return nil, fmt.Errorf("no DIE at %#x", off)
	}
	l = &Layout{Offset: off}
	switch e.Tag {
	case dwarf.TagStructType:
		l.Kind = "struct"
	case dwarf.TagClassType:
		l.Kind = "class"
	case dwarf.TagUnionType:
		l.Kind = "union"
	default:
		return nil, fmt.Errorf("DIE at %#x is a %v, not a struct", off, e.Tag)
	}
	l.Name, _ = e.Val(dwarf.AttrName).(string)
	var sized bool
	l.Size, sized = e.Val(dwarf.AttrByteSize).(int64)
	decl, _ := e.Val(dwarf.AttrDeclaration).(bool)
	l.Declared = decl || !sized
	explicitAlign, _ := e.Val(dwarf.AttrAlignment).(int64)
	if !e.Children {
		l.Align = max(explicitAlign, 1)
		return l, nil
	}
	depth := 0
	for {
		kid, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if kid == nil {
			break
		}
		if kid.Tag == 0 {
			if depth == 0 {
				break
			}
			depth--
			continue
		}
		if depth > 0 {
			if kid.Children {
				depth++
			}
			continue
		}
		if kid.Children {
			depth++
		}
		if kid.Tag != dwarf.TagMember && kid.Tag != dwarf.TagInheritance {
			continue
		}
		if d, _ := kid.Val(dwarf.AttrDeclaration).(bool); d {
			continue // a C++ static data member (DWARF 4)
		}
		if _, ext := kid.Val(dwarf.AttrExternal).(bool); ext && kid.Tag == dwarf.TagMember {
			continue
		}
		m, err := r.member(kid, v)
		if err != nil {
			return nil, err
		}
		l.Members = append(l.Members, m)
	}
	l.Align = max(explicitAlign, 1)
	for _, m := range l.Members {
		if !m.Virtual {
			l.Align = max(l.Align, TypeAlign(m.Type))
		}
	}
	return l, nil
}

func (r *Reader) member(kid *dwarf.Entry, v *view) (*Member, error) {
	m := &Member{Base: kid.Tag == dwarf.TagInheritance}
	m.Name, _ = kid.Val(dwarf.AttrName).(string)
	m.Artificial, _ = kid.Val(dwarf.AttrArtificial).(bool)
	var t godwarf.Type
	var err error
	switch toff := kid.Val(dwarf.AttrType).(type) {
	case dwarf.Offset:
		t, err = r.Type(v.base + toff)
	case int64, uint32, uint64:
		// DW_FORM_GNU_ref_alt (int64) or DW_FORM_ref_sup4/8: a type in the
		// supplementary file.
		if r.alt == nil {
			return nil, fmt.Errorf("member %q at %#x has its type in the supplementary file, which was not read", m.Name, kid.Offset)
		}
		t, err = r.alt.Type(dwarf.Offset(asUint(toff)))
	default:
		return nil, fmt.Errorf("member %q at %#x has no type", m.Name, kid.Offset)
	}
	if err != nil {
		return nil, err
	}
	m.Type = t
	m.Size = TypeSize(t)
	if m.Base {
		m.Name = TypeName(t)
		if st, ok := Strip(t).(*godwarf.StructType); ok && st.StructName != "" {
			m.Name = st.StructName
			// The qualified name, as the type graph has it (godwarf keeps
			// the DWARF name only), while both readers exist.
			if mt, err := r.main.Types().At(r.GlobalOffset(st)); err == nil && mt.Kind.Aggregate() && mt.Name != "" {
				m.Name = mt.Name
			}
		}
		if v, _ := kid.Val(dwarf.AttrVirtuality).(int64); v != 0 {
			m.Virtual = true
		}
	}
	switch loc := kid.Val(dwarf.AttrDataMemberLoc).(type) {
	case int64:
		m.Offset = loc
	case []byte:
		if len(loc) > 0 && loc[0] == 0x23 { // DW_OP_plus_uconst
			v, _ := ulebSafe(loc[1:])
			m.Offset = int64(v)
		} else if len(loc) > 0 {
			m.Virtual = true // a location computed at run time (virtual base)
		}
	}
	bitSize, _ := kid.Val(dwarf.AttrBitSize).(int64)
	if bitSize > 0 {
		m.BitSize = bitSize
		if dbo, ok := kid.Val(dwarf.AttrDataBitOffset).(int64); ok {
			m.BitOffset = dbo
		} else {
			// DWARF 2/3 style: the offset of the high bit within a storage
			// unit of DW_AT_byte_size bytes at DW_AT_data_member_location
			// (little-endian: count from the top).
			unit, _ := kid.Val(dwarf.AttrByteSize).(int64)
			if unit == 0 {
				unit = m.Size
			}
			bo, _ := kid.Val(dwarf.AttrBitOffset).(int64)
			m.BitOffset = m.Offset*8 + unit*8 - bo - bitSize
		}
		if m.Size > 0 {
			m.Offset = m.BitOffset / (m.Size * 8) * m.Size
		} else {
			m.Offset = m.BitOffset / 8
		}
	}
	return m, nil
}

func asUint(v any) uint64 {
	switch x := v.(type) {
	case int64:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	}
	return 0
}

func ulebSafe(b []byte) (uint64, bool) {
	var v uint64
	var shift uint
	for _, c := range b {
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, true
		}
		shift += 7
	}
	return v, false
}

// Strip removes typedefs and cv-qualifiers.
func Strip(t godwarf.Type) godwarf.Type {
	for range 64 {
		switch x := t.(type) {
		case *godwarf.TypedefType:
			t = x.Type
		case *godwarf.QualType:
			t = x.Type
		default:
			return t
		}
	}
	return t
}

// MaxTypeDepth bounds every walk down a chain of DWARF types (array of
// array of ..., typedef of typedef of ...). Real chains are a few links;
// corrupted DWARF can make a chain that loops (an array whose element is
// itself), which the bound ends.
const MaxTypeDepth = 64

// maxTypeSize is where sizes computed from DWARF saturate, so that offset +
// size sums never wrap (2^62 bytes; nothing real comes close).
const maxTypeSize = 1 << 62

// TypeSize is the byte size of a DWARF type. godwarf leaves arrays (and
// typedefs of arrays) without DW_AT_byte_size at -1; their size is computed
// from the element here. A flexible array has size 0. Sizes saturate at
// maxTypeSize; a chain of types that loops has size 0.
func TypeSize(t godwarf.Type) int64 {
	mult := int64(1)
	for range MaxTypeDepth {
		switch x := Strip(t).(type) {
		case nil:
			return 0
		case *godwarf.ArrayType:
			if x.Count <= 0 {
				return 0
			}
			if x.Count > maxTypeSize/mult {
				return maxTypeSize
			}
			mult *= x.Count
			t = x.Type
			continue
		case *godwarf.VoidType:
			return 0
		default:
			s := max(x.Size(), 0)
			if s > 0 && mult > maxTypeSize/s {
				return maxTypeSize
			}
			return s * mult
		}
	}
	return 0
}

// TypeAlign is the x86-64 alignment of a DWARF type. Structs are walked
// once each (a struct that contains itself, only possible in corrupted
// DWARF, adds nothing the second time).
func TypeAlign(t godwarf.Type) int64 {
	return typeAlign(t, map[*godwarf.StructType]bool{}, 0)
}

func typeAlign(t godwarf.Type, seen map[*godwarf.StructType]bool, depth int) int64 {
	if depth > MaxTypeDepth {
		return 1
	}
	switch x := Strip(t).(type) {
	case *godwarf.ArrayType:
		return typeAlign(x.Type, seen, depth+1)
	case *godwarf.StructType:
		if seen[x] {
			return 1
		}
		seen[x] = true
		a := int64(1)
		for _, f := range x.Field {
			a = max(a, typeAlign(f.Type, seen, depth+1))
		}
		return a
	case *godwarf.PtrType, *godwarf.FuncType:
		return 8
	case nil:
		return 1
	default:
		s := x.Size()
		switch {
		case s <= 0:
			return 1
		case s >= 16:
			return 16
		case s&(s-1) != 0:
			return 8
		}
		return s
	}
}

// TypeName spells a DWARF type as C's abstract declarator ("int (*)[7]",
// "const char *"), by the one renderer CDecl.
func TypeName(t godwarf.Type) string {
	return CDecl(t, "")
}

func countStr(n int64) string {
	if n < 0 {
		return ""
	}
	return fmt.Sprint(n)
}
