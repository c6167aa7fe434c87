package compat

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/nrtabi/nrtabi/readers/elfread"
)

// maxProbeCode bounds the probe's code decoded: the probe is a few dozen
// instructions.
const maxProbeCode = 1 << 16

// probeCompatID reads the compatibility id the version probe writes, from
// its code: the immediate it stores at the compatibility_version offset of
// its out-argument (docs/sources.md#s001-4: movq $0x59,0x30(%rax)). It
// returns ok false with why when the code holds no such store, or more than
// one value: the id is then unknown, never guessed.
func (s *side) probeCompatID(probe string, offset int64) (id uint64, ok bool, why string) {
	if s.obj.File.Machine.String() != "EM_X86_64" {
		return 0, false, fmt.Sprintf("%s is %v code; the probe decoder reads x86-64 only", s.path, s.obj.File.Machine)
	}
	sym := s.exported(probe)
	if sym == nil {
		return 0, false, probe + " is not exported"
	}
	if sym.Size == 0 || sym.Size > maxProbeCode {
		return 0, false, fmt.Sprintf("%s is %d bytes (1 to %d are decoded)", probe, sym.Size, maxProbeCode)
	}
	code := elfread.FunctionBytes(s.obj, sym.Value, sym.Size)
	if code == nil {
		return 0, false, fmt.Sprintf("the code of %s at %#x is not in the file", probe, sym.Value)
	}
	seen := map[uint64]bool{}
	for pc := 0; pc < len(code); {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			pc++
			continue
		}
		pc += inst.Len
		if inst.Op != x86asm.MOV || inst.MemBytes < 4 {
			continue
		}
		m, isMem := inst.Args[0].(x86asm.Mem)
		imm, isImm := inst.Args[1].(x86asm.Imm)
		if !isMem || !isImm || m.Base == x86asm.RIP || m.Base == x86asm.RSP || m.Index != 0 || m.Disp != offset {
			continue
		}
		seen[uint64(imm)] = true
	}
	switch len(seen) {
	case 0:
		return 0, false, fmt.Sprintf("%s stores no constant at offset %#x (compatibility_version)", probe, offset)
	case 1:
		for v := range seen {
			return v, true, ""
		}
	}
	return 0, false, fmt.Sprintf("%s stores %d different constants at offset %#x", probe, len(seen), offset)
}
