// Package riprel decodes x86-64 machine code for the addresses its
// RIP-relative memory operands reach: the slot a release trampoline jumps
// or calls through, which layoutcheck compares with the spec's slot table.
// It reads bytes only; elfread.FunctionBytes finds a function's bytes.
//
// See docs/layoutcheck.md#addresses.
package riprel

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// MaxCode bounds the code decoded: a trampoline is a few instructions, and
// anything much larger is not one.
const MaxCode = 1 << 16

// Targets decodes code, which starts at virtual address addr, and returns
// the addresses its RIP-relative memory operands reach. A byte that does
// not decode is stepped over, so padding and data in the code do not stop
// the walk.
func Targets(code []byte, addr uint64) (map[uint64]bool, error) {
	if len(code) == 0 || len(code) > MaxCode {
		return nil, fmt.Errorf("function size %d (1 to %d bytes are decoded)", len(code), MaxCode)
	}
	out := map[uint64]bool{}
	for pc := 0; pc < len(code); {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			pc++
			continue
		}
		next := addr + uint64(pc+inst.Len)
		for _, a := range inst.Args {
			if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RIP {
				out[uint64(int64(next)+m.Disp)] = true
			}
		}
		pc += inst.Len
	}
	return out, nil
}
