package layoutcheck

import (
	"debug/elf"
	"fmt"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/readers/riprel"
	"github.com/nrtabi/nrtabi/spec"
)

// CheckAddresses compares definer, trampoline, sentinel and slot addresses
// with the spec. Differences are compatible changes: the binary is not the
// exact release build, but nothing in the ABI depends on addresses.
func CheckAddresses(o *elfread.File, role string, sp *spec.Spec) ([]ContractCheck, error) {
	t, err := elfread.ReadDynTable(o)
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
	case specmatch.RoleLibnccom:
		for _, f := range sp.ByIndex() {
			if s := t.Defined(f.Name); s != nil {
				cmp(f.Name, f.NCCOMAddr, s.Value, "definer")
			}
		}
		c.rule("neuron* definer addresses", fs)
	case specmatch.RoleLibnrt:
		for _, r := range sp.Reverse {
			if s := t.Defined(r.Name); s != nil {
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

func (c *contract) libnrtStatics(o *elfread.File, sp *spec.Spec, fs *[]Finding, cmp func(string, uint64, uint64, string)) {
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
		if _, ok := byName[elfread.BaseIdent(s.Name)]; !ok {
			byName[elfread.BaseIdent(s.Name)] = s
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
		refs, err := ripTargets(o, s)
		if err != nil {
			*fs = append(*fs, finding(Info, KindUnverified, f.Trampoline, "", "", "cannot decode %s: %v", f.Trampoline, err))
			continue
		}
		if !refs[f.Slot] {
			*fs = append(*fs, finding(Compatible, KindAddress, f.Name, fmt.Sprintf("slot %#x", f.Slot), "", "%s does not reference %s's slot %#x", f.Trampoline, f.Name, f.Slot))
		}
	}
}

// ripTargets decodes a trampoline's code for the addresses its
// RIP-relative operands reach.
func ripTargets(o *elfread.File, s elf.Symbol) (map[uint64]bool, error) {
	if s.Size == 0 || s.Size > riprel.MaxCode {
		return nil, fmt.Errorf("function size %d", s.Size)
	}
	code := elfread.FunctionBytes(o, s.Value, s.Size)
	if code == nil {
		return nil, fmt.Errorf("%#x is in no executable section", s.Value)
	}
	return riprel.Targets(code, s.Value)
}
