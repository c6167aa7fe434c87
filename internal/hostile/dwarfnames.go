package hostile

import "strings"

// dwarfNamesSource is one unit whose struct names are not what a spec row
// of their name would read back as: structs named as the spec type
// language's built-in types (u32, int, char: a member typed "u32" is the
// 4-byte integer, not the 8-byte struct), structs whose names carry ESC
// and control bytes, a struct with an empty name attribute (no name, not a
// name "") and a member with one, and a struct using each of them.
var dwarfNamesSource = unit(`
.Luint:	.uleb128 4; .string "unsigned int"; .byte 4; .byte 8
.Lsu32:	.uleb128 2; .string "u32"; .uleb128 8
	.uleb128 3; .string "lo"; .long .Luint - .Lcu; .uleb128 0
	.uleb128 3; .string "hi"; .long .Luint - .Lcu; .uleb128 4
	.byte 0
.Lsint:	.uleb128 2; .string "int"; .uleb128 12
	.uleb128 3; .string "a"; .long .Luint - .Lcu; .uleb128 0
	.uleb128 3; .string "b"; .long .Luint - .Lcu; .uleb128 4
	.uleb128 3; .string "c"; .long .Luint - .Lcu; .uleb128 8
	.byte 0
.Lschar: .uleb128 2; .string "char"; .uleb128 16
	.uleb128 3; .string "a"; .long .Luint - .Lcu; .uleb128 0
	.uleb128 3; .string "d"; .long .Luint - .Lcu; .uleb128 12
	.byte 0
.Lsesc:	.uleb128 2; .string "esc\033[2Jname"; .uleb128 4
	.uleb128 3; .string "v"; .long .Luint - .Lcu; .uleb128 0
	.byte 0
.Lsctl:	.uleb128 2; .string "ctl\001\177x"; .uleb128 4
	.uleb128 3; .string "v"; .long .Luint - .Lcu; .uleb128 0
	.byte 0
.Lsempty: .uleb128 2; .string ""; .uleb128 4
	.uleb128 3; .string "v"; .long .Luint - .Lcu; .uleb128 0
	.byte 0
.Lsmem:	.uleb128 2; .string "empty_member"; .uleb128 8
	.uleb128 3; .string ""; .long .Luint - .Lcu; .uleb128 0
	.uleb128 3; .string "w"; .long .Luint - .Lcu; .uleb128 4
	.byte 0
.Lhold:	.uleb128 2; .string "holder"; .uleb128 56
	.uleb128 3; .string "pu"; .long .Lsu32 - .Lcu; .uleb128 0
	.uleb128 3; .string "pi"; .long .Lsint - .Lcu; .uleb128 8
	.uleb128 3; .string "pc"; .long .Lschar - .Lcu; .uleb128 20
	.uleb128 3; .string "pe"; .long .Lsesc - .Lcu; .uleb128 36
	.uleb128 3; .string "pk"; .long .Lsctl - .Lcu; .uleb128 40
	.uleb128 3; .string "pz"; .long .Lsempty - .Lcu; .uleb128 44
	.uleb128 3; .string "x"; .long .Luint - .Lcu; .uleb128 48
	.uleb128 3; .string "y"; .long .Luint - .Lcu; .uleb128 52
	.byte 0
`)

// DWARFNames writes "dwarf-names.o", the object of dwarfNamesSource:
// extract --all of it must give a fragment the loader accepts and that the
// object checks clean against. It needs gcc.
func DWARFNames(dir string) (ELFCase, error) {
	p, err := assemble(dir, "dwarf-names", dwarfNamesSource)
	return ELFCase{Name: "dwarf-names", Path: p}, err
}

// namesAbbrevs are the abbreviations of unit and three more: an enum, its
// enumerators and a typedef.
var namesAbbrevs = strings.TrimSuffix(strings.TrimRight(abbrevs, "\n\t"), ".byte 0") + `
	.uleb128 9; .uleb128 0x04; .byte 1      # enumeration_type, children
	.uleb128 0x03; .uleb128 0x08            # name: string
	.uleb128 0x0b; .uleb128 0x0b            # byte_size: data1
	.uleb128 0x49; .uleb128 0x13            # type: ref4
	.byte 0, 0
	.uleb128 10; .uleb128 0x28; .byte 0     # enumerator
	.uleb128 0x03; .uleb128 0x08
	.uleb128 0x1c; .uleb128 0x0d            # const_value: sdata
	.byte 0, 0
	.uleb128 11; .uleb128 0x16; .byte 0     # typedef
	.uleb128 0x03; .uleb128 0x08
	.uleb128 0x49; .uleb128 0x13
	.byte 0, 0
	.byte 0
`

// emptyNamesSource is a unit whose DIEs carry empty name attributes: a
// base type, a typedef, an enum and an enumerator, each used by a member
// of one struct. An empty name is no name: the fragment must check clean.
var emptyNamesSource = strings.Replace(unit(`
.Luint:	.uleb128 4; .string "unsigned int"; .byte 4; .byte 8
.Lnob:	.uleb128 4; .string ""; .byte 4; .byte 8
.Lnot:	.uleb128 11; .string ""; .long .Luint - .Lcu
.Lnoe:	.uleb128 9; .string ""; .byte 4; .long .Luint - .Lcu
	.uleb128 10; .string "EMPTY_A"; .sleb128 0
	.uleb128 10; .string ""; .sleb128 1
	.byte 0
.Lnamedenum: .uleb128 9; .string "named_enum"; .byte 4; .long .Luint - .Lcu
	.uleb128 10; .string "NAMED_A"; .sleb128 0
	.uleb128 10; .string ""; .sleb128 1
	.byte 0
.Linner: .uleb128 2; .string "inner"; .uleb128 4
	.uleb128 3; .string "v"; .long .Luint - .Lcu; .uleb128 0
	.byte 0
.Lnos:	.uleb128 2; .string ""; .uleb128 8
	.uleb128 3; .string "p"; .long .Luint - .Lcu; .uleb128 0
	.uleb128 3; .string "q"; .long .Luint - .Lcu; .uleb128 4
	.byte 0
.Ltds:	.uleb128 11; .string "typedefd_t"; .long .Lnos - .Lcu
.Lhold:	.uleb128 2; .string "empty_names"; .uleb128 40
	.uleb128 3; .string "b"; .long .Lnob - .Lcu; .uleb128 0
	.uleb128 3; .string "t"; .long .Lnot - .Lcu; .uleb128 4
	.uleb128 3; .string "e"; .long .Lnoe - .Lcu; .uleb128 8
	.uleb128 3; .string "n"; .long .Lnamedenum - .Lcu; .uleb128 12
	.uleb128 3; .string "x"; .long .Luint - .Lcu; .uleb128 16
	.uleb128 3; .string ""; .long .Linner - .Lcu; .uleb128 20
	.uleb128 3; .string ""; .long .Lnos - .Lcu; .uleb128 24
	.uleb128 3; .string "td"; .long .Ltds - .Lcu; .uleb128 32
	.byte 0
`), abbrevs, namesAbbrevs, 1)

// DWARFEmptyNames writes "dwarf-empty-names.o", the object of
// emptyNamesSource. It needs gcc.
func DWARFEmptyNames(dir string) (ELFCase, error) {
	p, err := assemble(dir, "dwarf-empty-names", emptyNamesSource)
	return ELFCase{Name: "dwarf-empty-names", Path: p}, err
}
