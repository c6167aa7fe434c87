package riprel

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// StoredImmediates decodes code and returns, in the order they appear, the
// immediates it moves into memory at displacement disp off a general
// register with no index: how a version probe fills a field of the struct
// it was handed (`movq $0x59,0x30(%rax)`, docs/nrtabi-compat.md). Stores
// off RSP are the stack's and RIP-relative ones a global's, not the
// struct's, so they are left out; RBP stays in, since optimised code holds
// the pointer there as in any other register. A byte that does not decode
// is stepped over, as in Targets.
func StoredImmediates(code []byte, disp int64) ([]uint64, error) {
	if len(code) == 0 || len(code) > MaxCode {
		return nil, fmt.Errorf("function size %d (1 to %d bytes are decoded)", len(code), MaxCode)
	}
	var out []uint64
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
		if !isMem || !isImm || m.Disp != disp || m.Index != 0 {
			continue
		}
		if m.Base == x86asm.RIP || m.Base == x86asm.RSP {
			continue
		}
		out = append(out, uint64(imm))
	}
	return out, nil
}
