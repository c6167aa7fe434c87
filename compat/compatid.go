package compat

import (
	"fmt"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/readers/riprel"
)

// maxProbeCode bounds the probe's code decoded: the probe is a few dozen
// instructions.
const maxProbeCode = riprel.MaxCode

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
	stores, err := riprel.StoredImmediates(code, offset)
	if err != nil {
		return 0, false, fmt.Sprintf("%s: %v", probe, err)
	}
	seen := map[uint64]bool{}
	for _, v := range stores {
		seen[v] = true
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
