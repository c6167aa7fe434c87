package elfread

import "debug/elf"

// DynTable is the dynamic symbol table with its version information.
type DynTable struct {
	Syms   []elf.Symbol
	byName map[string][]*elf.Symbol
	Defs   []elf.DynamicVersion
	Needs  []elf.DynamicVersionNeed
}

// ReadDynTable reads .dynsym with its version definitions and needs.
// Errors are *InputError.
func ReadDynTable(o *File) (*DynTable, error) {
	if o.File.Section(".dynsym") == nil {
		return nil, InputErrorf(o.Path, "is a %s without a dynamic symbol table; the link contract needs the linked shared object (or pass --role none)", o.Kind())
	}
	syms, err := o.File.DynamicSymbols()
	if err != nil {
		return nil, InputErrorf(o.Path, "corrupted dynamic symbol table: %w", err)
	}
	t := &DynTable{Syms: syms, byName: map[string][]*elf.Symbol{}}
	for i := range syms {
		t.byName[syms[i].Name] = append(t.byName[syms[i].Name], &syms[i])
	}
	if sectionOfType(o, elf.SHT_GNU_VERDEF) {
		if t.Defs, err = o.File.DynamicVersions(); err != nil {
			return nil, InputErrorf(o.Path, "corrupted .gnu.version_d: %w", err)
		}
	}
	if sectionOfType(o, elf.SHT_GNU_VERNEED) {
		if t.Needs, err = o.File.DynamicVersionNeeds(); err != nil {
			return nil, InputErrorf(o.Path, "corrupted .gnu.version_r: %w", err)
		}
	}
	return t, nil
}

func sectionOfType(o *File, typ elf.SectionType) bool {
	for _, s := range o.File.Sections {
		if s.Type == typ {
			return true
		}
	}
	return false
}

// Defined returns the symbol name defines, or nil.
func (t *DynTable) Defined(name string) *elf.Symbol {
	for _, s := range t.byName[name] {
		if s.Section != elf.SHN_UNDEF {
			return s
		}
	}
	return nil
}

// Undefined returns the undefined (imported) symbol name, or nil.
func (t *DynTable) Undefined(name string) *elf.Symbol {
	for _, s := range t.byName[name] {
		if s.Section == elf.SHN_UNDEF {
			return s
		}
	}
	return nil
}

// VersionName is the version node a defined symbol is bound to ("" for the
// base or global index).
func (t *DynTable) VersionName(s *elf.Symbol) string {
	if !s.HasVersion || s.VersionIndex.Index() <= 1 {
		return ""
	}
	for _, d := range t.Defs {
		if d.Index == s.VersionIndex.Index() {
			if d.Flags&elf.VER_FLG_BASE != 0 {
				return ""
			}
			return d.Name
		}
	}
	return s.Version
}
