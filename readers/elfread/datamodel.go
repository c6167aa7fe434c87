package elfread

import (
	"debug/elf"
	"strings"
)

// dataModel names the C data model of an object from its ELF class:
// ILP32 for ELF32 (ARM, i386, x32), LP64 for ELF64.
func (o *File) dataModel() string {
	if o.File.Class == elf.ELFCLASS32 {
		return "ILP32"
	}
	return "LP64"
}

func machineName(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86-64"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_386:
		return "i386"
	case elf.EM_ARM:
		return "ARM"
	}
	return strings.TrimPrefix(m.String(), "EM_")
}

// checkDataModel refuses an object whose layouts the spec cannot describe.
// The spec's type grammar is LP64 (8-byte pointers, long and size_t) with
// the x86-64/aarch64 alignment rules; reading an ILP32 object as if it were
// would write 8-byte pointers into a 4-byte-pointer layout.
func (o *File) checkDataModel() error {
	f := o.File
	if f.Class == elf.ELFCLASS64 && (f.Machine == elf.EM_X86_64 || f.Machine == elf.EM_AARCH64) {
		return nil
	}
	return InputErrorf(o.Path, "is an ELF%d %s object (data model %s); spec layouts are LP64: give an x86-64 or aarch64 build", classBits(f.Class), machineName(f.Machine), o.dataModel())
}

func classBits(c elf.Class) int {
	if c == elf.ELFCLASS32 {
		return 32
	}
	return 64
}
