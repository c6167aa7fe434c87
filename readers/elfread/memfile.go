package elfread

import (
	"path"
)

// NewMemFile reads the ELF file held in data, named name in errors and
// reports: a member of a package (docs/packages.md), such as
// "libnrt_2.31.24_amd64.deb!/usr/lib/libnrt.so.1". Unlike Open's files it
// is next to nothing on disk: no debug file is looked for beside it, only
// through the Lookup's directories, its in-memory debug files (Mem) and
// debuginfod. data is used in place and must not change.
func NewMemFile(name string, data []byte) (*File, error) {
	if len(data) < 16 {
		return nil, InputErrorf(name, "not an ELF file (%d bytes, too short for an ELF header)", len(data))
	}
	f, err := newFile(name, data, false)
	if err != nil {
		return nil, err
	}
	f.inMemory = true
	return f, nil
}

// MemDebug holds debug files in memory — the members of a -dbgsym or
// -debuginfo package given beside the main one — and answers the debug
// lookup from them by build-id and by file name (.gnu_debuglink, a dwz
// supplement's name), as abipkgdiff pairs packages.
type MemDebug struct {
	byID   map[string][]memEntry
	byName map[string][]memEntry
}

type memEntry struct {
	name string
	data []byte                 // the bytes, or nil with load
	load func() ([]byte, error) // reads them when asked (a package's member)
}

// bytes are the entry's bytes, read now when they are not held.
func (e memEntry) bytes() ([]byte, error) {
	if e.data != nil || e.load == nil {
		return e.data, nil
	}
	return e.load()
}

// Add indexes the ELF file held in data under its build-id (read from the
// file, not its member name: an .rpm's .build-id entries are symlinks) and
// its base name. A member that is not a readable ELF file is left out: it
// is nobody's debug file.
func (m *MemDebug) Add(name string, data []byte) {
	f, err := NewMemFile(name, data)
	if err != nil {
		return
	}
	id := f.BuildID
	f.Close()
	m.add(memEntry{name: name, data: data}, id)
}

// AddLazy indexes a file whose build-id is already known (id, "" for none)
// and whose bytes load reads when a lookup tries it: a package's member,
// whose bytes are not held between uses (docs/packages.md#memory).
func (m *MemDebug) AddLazy(name, id string, load func() ([]byte, error)) {
	m.add(memEntry{name: name, load: load}, id)
}

func (m *MemDebug) add(e memEntry, id string) {
	if m.byID == nil {
		m.byID, m.byName = map[string][]memEntry{}, map[string][]memEntry{}
	}
	if id != "" {
		m.byID[id] = append(m.byID[id], e)
	}
	base := path.Base(e.name)
	m.byName[base] = append(m.byName[base], e)
}

// Len is the number of files held.
func (m *MemDebug) Len() int {
	if m == nil {
		return 0
	}
	n := 0
	for _, es := range m.byName {
		n += len(es)
	}
	return n
}

func (m *MemDebug) withID(id string) []memEntry {
	if m == nil || id == "" {
		return nil
	}
	return m.byID[id]
}

func (m *MemDebug) named(name string) []memEntry {
	if m == nil {
		return nil
	}
	return m.byName[name]
}

// tryMem opens an in-memory candidate as tryDebugFile opens one on disk.
func tryMem(obj *File, e memEntry, match func(*File) bool, via, mismatch string) (*Debug, string) {
	data, err := e.bytes()
	if err != nil {
		return nil, errMsg(err)
	}
	c, err := NewMemFile(e.name, data)
	if err != nil {
		return nil, errMsg(err)
	}
	return acceptDebug(obj, c, match, via, mismatch)
}
