package elfread

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"sort"
	"strings"
)

// oneDWARF is the in-memory debug files that claim obj's build-id, the
// input itself left out. Two that claim it with different DWARF are an
// ambiguity nothing here may settle (which one a verdict came from would
// follow the order of the arguments): it is refused naming both. Copies
// with the same DWARF (the same debug package given twice, a debug file
// shipped in two packages) are one answer (docs/packages.md#debug-packages).
func (m *MemDebug) oneDWARF(obj *File) ([]memEntry, error) {
	var cands []memEntry
	for _, e := range m.withID(obj.BuildID) {
		if e.name != obj.Path {
			cands = append(cands, e) // else the input itself: every member of a package is indexed
		}
	}
	if len(cands) < 2 {
		return cands, nil
	}
	type seen struct {
		name  string
		dwarf []byte
	}
	var first *seen
	for _, e := range cands {
		data, err := e.bytes()
		if err != nil {
			return nil, err
		}
		d := dwarfBytes(data)
		if d == nil {
			continue // no DWARF: no claim on the verdict (acceptDebug says why)
		}
		if first == nil {
			first = &seen{e.name, d}
			continue
		}
		if !bytes.Equal(first.dwarf, d) {
			a, b := first.name, e.name
			names := []string{a, b}
			sort.Strings(names)
			return nil, InputErrorf(obj.Path, "build-id %s is claimed by two debug files with different DWARF, %s and %s: which one describes it is a guess; give only the debug package built with it", obj.BuildID, names[0], names[1])
		}
	}
	return cands, nil
}

// dwarfBytes is a digest of a file's DWARF sections, named and in name
// order; nil when it has none or is no readable ELF.
func dwarfBytes(data []byte) []byte {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	defer f.Close()
	var secs []*elf.Section
	for _, s := range f.Sections {
		if (strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_")) && s.Type != elf.SHT_NOBITS {
			secs = append(secs, s)
		}
	}
	if len(secs) == 0 {
		return nil
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i].Name < secs[j].Name })
	out := sha256.New()
	for _, s := range secs {
		if s.Offset > uint64(len(data)) || s.Size > uint64(len(data))-s.Offset {
			return nil
		}
		out.Write([]byte(s.Name + "\x00"))
		out.Write(data[s.Offset : s.Offset+s.Size])
	}
	return out.Sum(nil)
}
