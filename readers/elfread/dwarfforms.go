package elfread

// DWARF constants the scanner needs (DWARF 5, §7).
const (
	formAddr          = 0x01
	formBlock2        = 0x03
	formBlock4        = 0x04
	formData2         = 0x05
	formData4         = 0x06
	formData8         = 0x07
	formString        = 0x08
	formBlock         = 0x09
	formBlock1        = 0x0a
	formData1         = 0x0b
	formFlag          = 0x0c
	formSdata         = 0x0d
	formStrp          = 0x0e
	formUdata         = 0x0f
	formRefAddr       = 0x10
	formRef1          = 0x11
	formRef2          = 0x12
	formRef4          = 0x13
	formRef8          = 0x14
	formRefUdata      = 0x15
	formIndirect      = 0x16
	formSecOffset     = 0x17
	formExprloc       = 0x18
	formFlagPresent   = 0x19
	formStrx          = 0x1a
	formAddrx         = 0x1b
	formRefSup4       = 0x1c
	formStrpSup       = 0x1d
	formData16        = 0x1e
	formLineStrp      = 0x1f
	formRefSig8       = 0x20
	formImplicitConst = 0x21
	formLoclistx      = 0x22
	formRnglistx      = 0x23
	formRefSup8       = 0x24
	formStrx1         = 0x25
	formStrx2         = 0x26
	formStrx3         = 0x27
	formStrx4         = 0x28
	formAddrx1        = 0x29
	formAddrx2        = 0x2a
	formAddrx3        = 0x2b
	formAddrx4        = 0x2c
	formGNUAddrIndex  = 0x1f01
	formGNUStrIndex   = 0x1f02
	formGNURefAlt     = 0x1f20
	formGNUStrpAlt    = 0x1f21

	attrSibling          = 0x01
	attrName             = 0x03
	attrByteSize         = 0x0b
	attrDeclaration      = 0x3c
	attrType             = 0x49
	attrStrOffsetsBase   = 0x72
	attrExportSymbols    = 0x89
	tagClassType         = 0x02
	tagEnumerationType   = 0x04
	tagStructType        = 0x13
	tagTypedef           = 0x16
	tagUnionType         = 0x17
	tagConstType         = 0x26
	tagVolatileType      = 0x35
	tagNamespace         = 0x39
	unitTypeCompile      = 0x01
	unitTypeType         = 0x02
	unitTypePartial      = 0x03
	unitTypeSkeleton     = 0x04
	unitTypeSplitCompile = 0x05
	unitTypeSplitType    = 0x06
)

// fixedFormSize is the encoded size of a form whose size does not depend on
// the data, or -1.
func fixedFormSize(form uint32, version, addrSize, offSize int) int {
	switch form {
	case formAddr:
		return addrSize
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return 1
	case formData2, formRef2, formStrx2, formAddrx2:
		return 2
	case formStrx3, formAddrx3:
		return 3
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		return 4
	case formData8, formRef8, formRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	case formStrp, formSecOffset, formLineStrp, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return offSize
	case formRefAddr:
		if version <= 2 {
			return addrSize
		}
		return offSize
	case formFlagPresent, formImplicitConst:
		return 0
	}
	return -1
}
