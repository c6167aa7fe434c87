package elfread

// The DWARF attributes and tags the type front end (types.go) reads, on
// top of the scanner's (dwarfforms.go). DWARF 5, §7.5 and §7.6.
const (
	attrBitOffset      = 0x0c
	attrBitSize        = 0x0d
	attrLanguage       = 0x13
	attrConstValue     = 0x1c
	attrContainingType = 0x1d
	attrLowerBound     = 0x22
	attrPrototyped     = 0x27
	attrUpperBound     = 0x2f
	attrArtificial     = 0x34
	attrCount          = 0x37
	attrDataMemberLoc  = 0x38
	attrDeclFile       = 0x3a
	attrDeclLine       = 0x3b
	attrEncoding       = 0x3e
	attrExternal       = 0x3f
	attrVirtuality     = 0x4c
	attrDataBitOffset  = 0x6b
	attrAlignment      = 0x88

	tagArrayType         = 0x01
	tagFormalParameter   = 0x05
	tagMember            = 0x0d
	tagPointerType       = 0x0f
	tagReferenceType     = 0x10
	tagSubroutineType    = 0x15
	tagUnspecifiedParams = 0x18
	tagInheritance       = 0x1c
	tagPtrToMemberType   = 0x1f
	tagSubrangeType      = 0x21
	tagBaseType          = 0x24
	tagEnumerator        = 0x28
	tagRestrictType      = 0x37
	tagUnspecifiedType   = 0x3b
	tagRvalueRefType     = 0x42
	tagAtomicType        = 0x47

	opConstu     = 0x10
	opPlusUconst = 0x23
)

// cLanguage: a DW_AT_language of C, whose struct tags are not scoped by
// the struct they are declared in (C89, C, C99, C11, C17).
func cLanguage(lang uint64) bool {
	switch lang {
	case 0x01, 0x02, 0x0c, 0x1d, 0x2c:
		return true
	}
	return false
}

// Sleb reads a signed LEB128 value; one longer than 10 bytes fails.
func (c *cursor) Sleb() int64 {
	var v int64
	var shift uint
	for i := 0; ; i++ {
		if c.err != nil {
			return 0
		}
		if c.off >= len(c.b) || i >= 10 {
			c.Fail("LEB128 value runs past the end or past 10 bytes")
			return 0
		}
		b := c.b[c.off]
		c.off++
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b < 0x80 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}
