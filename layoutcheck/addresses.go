package layoutcheck

import (
	"debug/elf"
	"fmt"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
	"golang.org/x/arch/x86/x86asm"
)

// baseIdent returns the identifier a (possibly Itanium-mangled) symbol names:
// "_ZL15nccl_init_error" and "_Z18ncclGetVersionInfoP..." give the plain name.
func baseIdent(sym string) string {
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

// CheckAddresses compares definer, trampoline, sentinel and slot addresses
// with the spec. Differences are compatible changes: the binary is not the
// exact release build, but nothing in the ABI depends on addresses.
func CheckAddresses(o *Object, role string, sp *spec.Spec) ([]ContractCheck, error) {
	t, err := readDynTable(o)
	if err != nil {
		return nil, err
	}
	c := &contract{}
	var fs []Finding
	cmp := func(name string, want, got uint64, what string) {
		if want != got {
			fs = append(fs, finding(Compatible, KindAddress, name, fmt.Sprintf("%#x", want), fmt.Sprintf("%#x", got), "%s %s at %#x, release binary %#x", what, name, got, want))
		}
	}
	switch role {
	case RoleLibnccom:
		for _, f := range sp.ByIndex() {
			if s := t.defined(f.Name); s != nil {
				cmp(f.Name, f.NCCOMAddr, s.Value, "definer")
			}
		}
		c.rule("neuron* definer addresses", fs)
	case RoleLibnrt:
		for _, r := range sp.Reverse {
			if s := t.defined(r.Name); s != nil {
				cmp(r.Name, r.Addr, s.Value, "definer")
			}
		}
		c.rule("reverse definer addresses", fs)
		fs = nil
		c.libnrtStatics(o, sp, &fs, cmp)
		c.rule("trampoline, slot and sentinel addresses", fs)
	}
	return c.checks, nil
}

func (c *contract) libnrtStatics(o *Object, sp *spec.Spec, fs *[]Finding, cmp func(string, uint64, uint64, string)) {
	syms, err := o.File.Symbols()
	if err != nil || len(syms) == 0 {
		*fs = append(*fs, finding(Info, KindUnverified, "", ".symtab", "", "no .symtab: trampoline, slot and sentinel addresses cannot be compared"))
		return
	}
	byName := map[string]elf.Symbol{}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF {
			continue
		}
		if _, ok := byName[baseIdent(s.Name)]; !ok {
			byName[baseIdent(s.Name)] = s
		}
	}
	if s, ok := byName[sp.SlotTable.Sentinel]; ok {
		cmp(sp.SlotTable.Sentinel, sp.SlotTable.SentinelAddr, s.Value, "sentinel")
	} else {
		*fs = append(*fs, finding(Info, KindUnverified, sp.SlotTable.Sentinel, "", "", "no symbol %s in .symtab", sp.SlotTable.Sentinel))
	}
	for _, f := range sp.ByIndex() {
		s, ok := byName[f.Trampoline]
		if !ok {
			*fs = append(*fs, finding(Info, KindUnverified, f.Trampoline, "", "", "no symbol %s in .symtab", f.Trampoline))
			continue
		}
		cmp(f.Trampoline, f.TrampolineAddr, s.Value, "trampoline")
		refs, err := ripTargets(o, s.Value, s.Size)
		if err != nil {
			*fs = append(*fs, finding(Info, KindUnverified, f.Trampoline, "", "", "cannot decode %s: %v", f.Trampoline, err))
			continue
		}
		if !refs[f.Slot] {
			*fs = append(*fs, finding(Compatible, KindAddress, f.Name, fmt.Sprintf("slot %#x", f.Slot), "", "%s does not reference %s's slot %#x", f.Trampoline, f.Name, f.Slot))
		}
	}
}

// ripTargets decodes a function and returns the addresses its RIP-relative
// memory operands reach (the slot a trampoline jumps or calls through).
func ripTargets(o *Object, addr, size uint64) (map[uint64]bool, error) {
	if size == 0 || size > 1<<16 {
		return nil, fmt.Errorf("function size %d", size)
	}
	code := functionBytes(o, addr, size)
	if code == nil {
		return nil, fmt.Errorf("%#x is in no executable section", addr)
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
