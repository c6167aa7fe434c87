package elfread

import (
	"debug/elf"
	"strconv"
	"strings"
)

// BaseIdent returns the identifier a (possibly Itanium-mangled) symbol names:
// "_ZL15nccl_init_error" and "_Z18ncclGetVersionInfoP..." give the plain name.
func BaseIdent(sym string) string {
	if !strings.HasPrefix(sym, "_Z") {
		return sym
	}
	s := strings.TrimPrefix(sym[2:], "L")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil || n > len(s)-i {
		return sym
	}
	return s[i : i+n]
}

// FunctionBytes returns the code of a function, or nil.
func FunctionBytes(o *File, addr, size uint64) []byte {
	if size == 0 || size > 1<<20 {
		return nil
	}
	for _, s := range o.File.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && addr >= s.Addr {
			// Checked against the bytes the file holds (FileSize, not the
			// header's Size) and without the sum addr+size that can wrap.
			b := o.sectionBytes(s)
			if at := addr - s.Addr; at <= uint64(len(b)) && size <= uint64(len(b))-at {
				return b[at : at+size]
			}
		}
	}
	return nil
}
