package compat

import (
	"bytes"
	"debug/elf"
	"fmt"
	"regexp"
	"sync"

	"github.com/nrtabi/nrtabi/readers/elfread"
)

// side is one binary as the loader sees it: its dynamic table with the
// version definitions and needs, and its identity.
type side struct {
	path   string // the input's name, for messages
	obj    *elfread.File
	dyn    *elfread.DynTable
	lookup elfread.Lookup // where its separate debug files are found
}

// Input is one side as the caller found it: a file on disk, or a member of
// a package read in memory (readers/inputs.Input satisfies it).
type Input interface {
	Open() (*elfread.File, error)
	Lookup(elfread.Lookup) elfread.Lookup
}

// fileInput is a file on disk.
type fileInput string

func (f fileInput) Open() (*elfread.File, error)            { return elfread.Open(string(f)) }
func (f fileInput) Lookup(lk elfread.Lookup) elfread.Lookup { return lk }

func openSide(name string, in Input, lk elfread.Lookup) (*side, error) {
	o, err := in.Open()
	if err != nil {
		return nil, err
	}
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		o.Close()
		return nil, err
	}
	return &side{path: name, obj: o, dyn: t, lookup: in.Lookup(lk)}, nil
}

func (s *side) close() {
	if s != nil {
		s.obj.Close()
	}
}

// soname is the name other objects' version needs name this one by.
func (s *side) soname() string { return s.obj.SONAME }

// versioned: the file has version definitions or a version symbol table;
// one with neither is the "unversioned-library" row of [[link_behaviour]].
func (s *side) versioned() bool {
	for _, sec := range s.obj.File.Sections {
		if sec.Type == elf.SHT_GNU_VERSYM || sec.Type == elf.SHT_GNU_VERDEF {
			return true
		}
	}
	return false
}

// defines reports whether the file defines version node name.
func (s *side) definesNode(name string) bool {
	for _, d := range s.dyn.Defs {
		if d.Name == name && d.Flags&elf.VER_FLG_BASE == 0 {
			return true
		}
	}
	return false
}

// exported is the defined, global or weak, default-visible dynamic symbol
// name, or nil: what dlsym and ld.so's lookup can bind to.
func (s *side) exported(name string) *elf.Symbol {
	sym := s.dyn.Defined(name)
	if sym == nil {
		return nil
	}
	if b := elf.ST_BIND(sym.Info); b != elf.STB_GLOBAL && b != elf.STB_WEAK {
		return nil
	}
	if v := elf.ST_VISIBILITY(sym.Other); v == elf.STV_HIDDEN || v == elf.STV_INTERNAL {
		return nil
	}
	return sym
}

// maxStrings bounds the plugin table names read from a file's data.
const maxStrings = 64

// tableName is compiled on first use, not at start-up: every command of
// nrtabi links this package (docs/benchmarks.md#start-up-2026-12-03).
var tableName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ncclNetPlugin_v[0-9]{1,3}$`) })

// tableStrings are the NUL-terminated "ncclNetPlugin_vN" strings in the
// file's read-only data: the table names its code dlsyms.
func (s *side) tableStrings() []string {
	seen := map[string]bool{}
	var out []string
	for _, sec := range s.obj.File.Sections {
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_EXECINSTR != 0 || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		for rest := data; len(out) < maxStrings; {
			i := bytes.Index(rest, []byte("ncclNetPlugin_v"))
			if i < 0 {
				break
			}
			end := bytes.IndexByte(rest[i:], 0)
			if end < 0 {
				break
			}
			name := string(rest[i : i+end])
			if tableName().MatchString(name) && (i == 0 || rest[i-1] == 0) && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
			rest = rest[i+end:]
		}
	}
	return out
}

// exportedTables are the plugin tables the file exports as data objects.
func (s *side) exportedTables() []string {
	var out []string
	for i := range s.dyn.Syms {
		sym := &s.dyn.Syms[i]
		if tableName().MatchString(sym.Name) && s.exported(sym.Name) == sym && elf.ST_TYPE(sym.Info) == elf.STT_OBJECT {
			out = append(out, sym.Name)
		}
	}
	return out
}

// readCString reads the NUL-terminated string the data symbol name holds.
func (s *side) readCString(name string, max uint64) (string, error) {
	sym := s.exported(name)
	if sym == nil {
		return "", fmt.Errorf("%s is not exported", name)
	}
	if sym.Size == 0 || sym.Size > max {
		return "", fmt.Errorf("%s is %d bytes (1 to %d expected)", name, sym.Size, max)
	}
	for _, sec := range s.obj.File.Sections {
		if sec.Type == elf.SHT_NOBITS || sym.Value < sec.Addr || sym.Value-sec.Addr > sec.Size || sym.Size > sec.Size-(sym.Value-sec.Addr) {
			continue
		}
		b := make([]byte, sym.Size)
		if _, err := sec.ReadAt(b, int64(sym.Value-sec.Addr)); err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		n := bytes.IndexByte(b, 0)
		if n < 0 {
			return "", fmt.Errorf("%s is not NUL-terminated", name)
		}
		return string(b[:n]), nil
	}
	return "", fmt.Errorf("%s lies in no section with contents", name)
}
