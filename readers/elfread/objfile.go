package elfread

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// File is one ELF file: debug/elf's view of it (embedded, so its sections,
// program headers and symbol tables read as in debug/elf) and its identity.
// Open maps the file; NewFile reads it through an io.ReaderAt.
type File struct {
	*elf.File
	// Path is the file's name, where its debug files are looked for
	// next to it; "" for a File from NewFile, whose errors name no file.
	Path string

	data  []byte // the whole file
	unmap bool   // data is an mmap of the file (Open), not heap (NewFile)
	// inMemory: a package member (NewMemFile), named but not on disk.
	inMemory bool

	BuildID      string // hex, "" when the file has none
	debugLink    string // .gnu_debuglink file name
	debugLinkCRC uint32
	SONAME       string
	Needed       []string
}

// Open maps the regular file at path and reads its identity. Errors are
// *InputError. A file truncated while mapped faults on the next read past
// its new end: read it under Guard (fault.go).
func Open(path string) (*File, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		var nr *regfile.NotRegularError
		if errors.As(err, &nr) {
			return nil, InputErrorf(path, "is %s; give an ELF file", nr.What())
		}
		return nil, InputErrorf(path, "cannot open: %w", errors.Unwrap(err))
	}
	defer f.Close()
	size := st.Size()
	if size < 16 {
		return nil, InputErrorf(path, "not an ELF file (%d bytes, too short for an ELF header)", size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, InputErrorf(path, "cannot map: %w", err)
	}
	registerMapping(data, path) // a fault in it names the file (fault.go)
	return newFile(path, data, true)
}

// NewFile reads an ELF file from r: all of it, into memory, since the
// reader uses sections in place. The size is r's Size method's when it has
// one (bytes.Reader, io.SectionReader), else what r holds up to its end.
// Errors are *InputError without a file name, and the File has no Path, so
// no debug file is looked for next to it (the debug directories of a
// Lookup, by build-id, still apply).
func NewFile(r io.ReaderAt) (*File, error) {
	var data []byte
	if sz, ok := r.(interface{ Size() int64 }); ok {
		n := sz.Size()
		if n < 16 {
			return nil, InputErrorf("", "not an ELF file (%d bytes, too short for an ELF header)", max(n, 0))
		}
		if int64(int(n)) != n {
			return nil, InputErrorf("", "%d bytes: too large to read into memory", n)
		}
		data = make([]byte, n)
		if _, err := r.ReadAt(data, 0); err != nil && !(errors.Is(err, io.EOF)) {
			return nil, InputErrorf("", "cannot read: %w", err)
		}
	} else {
		b, err := io.ReadAll(io.NewSectionReader(r, 0, 1<<63-1))
		if err != nil {
			return nil, InputErrorf("", "cannot read: %w", err)
		}
		data = b
	}
	if len(data) < 16 {
		return nil, InputErrorf("", "not an ELF file (%d bytes, too short for an ELF header)", len(data))
	}
	return newFile("", data, false)
}

// newFile reads the identity of the ELF file in data.
func newFile(path string, data []byte, unmap bool) (f *File, err error) {
	size := int64(len(data))
	f = &File{Path: path, data: data, unmap: unmap}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return f, InputErrorf(path, "not an ELF file (starts with %q)", printable(data[:4]))
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return f, InputErrorf(path, "%s", describeELFError(err, size))
	}
	f.File = ef
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOBITS && s.FileSize > 0 && (s.Offset > uint64(size) || s.FileSize > uint64(size)-s.Offset) {
			return f, InputErrorf(path, "truncated: section %q (%d bytes at %d) ends past the file's %d bytes", s.Name, s.FileSize, s.Offset, size)
		}
	}
	if err := f.readIdentity(); err != nil {
		return f, err
	}
	return f, nil
}

func describeELFError(err error, size int64) string {
	var fe *elf.FormatError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Sprintf("truncated ELF file (%d bytes; its headers point past the end)", size)
	case errors.As(err, &fe):
		msg := err.Error()
		if strings.Contains(msg, "invalid") && strings.Contains(msg, "offset") || strings.Contains(msg, "out of range") {
			return fmt.Sprintf("truncated or corrupted ELF file (%s)", msg)
		}
		return "corrupted ELF file (" + msg + ")"
	}
	return "cannot read ELF file: " + err.Error()
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 32 || c > 126 {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}

// Close releases the file's bytes (unmaps what Open mapped); the File is
// not to be used after.
func (o *File) Close() error {
	if o == nil || o.data == nil {
		return nil
	}
	data := o.data
	o.data = nil
	if o.unmap {
		unregisterMapping(data)
		if err := syscall.Munmap(data); err != nil {
			return fmt.Errorf("%s: munmap: %w", o.Path, err)
		}
	}
	return nil
}

// sectionBytes returns the raw (possibly compressed) bytes of a section,
// without copying.
func (o *File) sectionBytes(s *elf.Section) []byte {
	if s.Type == elf.SHT_NOBITS || s.FileSize == 0 {
		return nil
	}
	return o.data[s.Offset : s.Offset+s.FileSize]
}

func (o *File) readIdentity() error {
	ef := o.File
	for _, s := range ef.Sections {
		switch {
		case s.Type == elf.SHT_NOTE && s.Name == ".note.gnu.build-id":
			o.BuildID = buildIDFromNote(o.sectionBytes(s), ef.ByteOrder)
		case s.Name == ".gnu_debuglink":
			b := o.sectionBytes(s)
			if i := bytes.IndexByte(b, 0); i > 0 {
				o.debugLink = string(b[:i])
				crcAt := (i + 4) &^ 3
				if crcAt+4 <= len(b) {
					o.debugLinkCRC = ef.ByteOrder.Uint32(b[crcAt:])
				}
			}
		}
	}
	if o.BuildID == "" {
		for _, p := range ef.Progs {
			if p.Type == elf.PT_NOTE && p.Off <= uint64(len(o.data)) && p.Filesz <= uint64(len(o.data))-p.Off {
				if id := buildIDFromNote(o.data[p.Off:p.Off+p.Filesz], ef.ByteOrder); id != "" {
					o.BuildID = id
					break
				}
			}
		}
	}
	soname, needed, err := o.dynamicNames()
	if err != nil {
		return InputErrorf(o.Path, "corrupted dynamic section: %w", err)
	}
	if len(soname) > 0 {
		o.SONAME = soname[0]
	}
	o.Needed = needed
	return nil
}

// dynamicNames reads DT_SONAME and DT_NEEDED from .dynamic (up to DT_NULL,
// as the dynamic linker reads it) and its string table in place, in the
// mapped file: debug/elf's DynString copies the whole string table onto the
// heap for each tag, 330 KB twice for libstdc++.
func (o *File) dynamicNames() (soname, needed []string, err error) {
	ef := o.File
	ds := ef.SectionByType(elf.SHT_DYNAMIC)
	if ds == nil {
		return nil, nil, nil
	}
	if ds.Link == 0 || int(ds.Link) >= len(ef.Sections) {
		return nil, nil, fmt.Errorf("its string table is section %d of %d", ds.Link, len(ef.Sections))
	}
	strtab := ef.Sections[ds.Link]
	if (ds.Flags|strtab.Flags)&elf.SHF_COMPRESSED != 0 {
		// Never seen in a linked object; debug/elf knows how to inflate it.
		if soname, err = ef.DynString(elf.DT_SONAME); err != nil {
			return nil, nil, err
		}
		needed, err = ef.DynString(elf.DT_NEEDED)
		return soname, needed, err
	}
	strs, dyn := o.sectionBytes(strtab), o.sectionBytes(ds)
	entry := 16
	if ef.Class == elf.ELFCLASS32 {
		entry = 8
	}
	// As DynString: a name that is not NUL-terminated inside the table is left out.
	str := func(off uint64) (string, bool) {
		b, ok := cStringAt(strs, off)
		return string(b), ok && off+uint64(len(b)) < uint64(len(strs))
	}
	for ; len(dyn) >= entry; dyn = dyn[entry:] {
		var tag, val uint64
		if entry == 16 {
			tag, val = ef.ByteOrder.Uint64(dyn), ef.ByteOrder.Uint64(dyn[8:])
		} else {
			tag, val = uint64(ef.ByteOrder.Uint32(dyn)), uint64(ef.ByteOrder.Uint32(dyn[4:]))
		}
		switch elf.DynTag(tag) {
		case elf.DT_NULL:
			return soname, needed, nil
		case elf.DT_SONAME:
			if v, ok := str(val); ok {
				soname = append(soname, v)
			}
		case elf.DT_NEEDED:
			if v, ok := str(val); ok {
				needed = append(needed, v)
			}
		}
	}
	return soname, needed, nil
}

// buildIDFromNote finds the NT_GNU_BUILD_ID descriptor in a note area.
func buildIDFromNote(b []byte, bo binary.ByteOrder) string {
	for len(b) >= 12 {
		namesz, descsz, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		nameEnd := 12 + int(align4(namesz))
		descEnd := nameEnd + int(align4(descsz))
		if namesz > 1<<20 || descsz > 1<<20 || descEnd > len(b) {
			return ""
		}
		if typ == 3 && namesz == 4 && string(b[12:15]) == "GNU" {
			return hex.EncodeToString(b[nameEnd : nameEnd+int(descsz)])
		}
		b = b[descEnd:]
	}
	return ""
}

func align4(n uint32) uint32 { return (n + 3) &^ 3 }

// Kind names the ELF file type for messages.
func (o *File) Kind() string {
	switch o.File.Type {
	case elf.ET_REL:
		return "relocatable object"
	case elf.ET_EXEC:
		return "executable"
	case elf.ET_DYN:
		if o.File.Section(".dynamic") == nil {
			return "position-independent file without a dynamic section"
		}
		return "shared object"
	}
	return o.File.Type.String()
}
