package elfread

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zlib"
)

// Debug is the DWARF of one input, read from the input itself or from a
// separate debug file.
type Debug struct {
	Input *File       // the file being checked
	File  *File       // where the DWARF lives
	Via   string      // ViaEmbedded, ViaBuildID or ViaDebugLink
	Data  *dwarf.Data // made on first use by DWARFData

	info, abbrev, str, strOffsets, lineStr, addr []byte
	// infoZ inflates a compressed .debug_info as the scan reaches it (nil
	// when the section is stored plain): info is its whole buffer, valid
	// up to what the units read so far needed.
	infoZ *stream
	// abbrevZ likewise for .debug_abbrev: a unit's table is inflated when
	// the unit is first read.
	abbrevZ *stream
	units   []unit
	order   binary.ByteOrder
	owned   *File
	// ownsInput: Input was opened by OpenDebug, and Close closes it.
	ownsInput bool

	// base is where this part's .debug_info starts in the combined offset
	// space of the main Debug (0 for the main one): a Found offset names
	// its part by range.
	base int
	// alt is the supplementary file's DWARF, which DW_FORM_GNU_strp_alt,
	// DW_FORM_strp_sup and the alt/sup references of this part point into.
	alt *Debug
	// altMissing names the supplementary file this part's DWARF refers
	// into when it was not found (Lookup.AllowMissing): a reference into
	// it is then a MissingPartError, not a fault of the DWARF.
	altMissing string
	// parts (main Debug only): the supplement and the split units.
	parts []*Debug
	// dwo is set on a split unit's part: the skeleton's DWARF version
	// decides the string offsets base.
	dwo  bool
	goAb []byte // the abbreviations rewritten for debug/dwarf (split parts)
	// sigs: the type units' signatures (typeunits.go), of this Debug and
	// its typesPart (the DWARF 4 .debug_types of the same file, a part
	// whose sigOwner is this Debug).
	sigs      sigTable
	typesPart *Debug
	sigOwner  *Debug
	// typesSection: info is .debug_types, whose units are DWARF 4 type
	// units.
	typesSection bool
	// types is the type graph (Types), made once.
	types     *Types
	typesOnce sync.Once
	// decl: the line tables' file names DeclFile read (declfile.go).
	decl lineTables
	// foundTable: the abbreviation table of the unit the last struct
	// lookup (find) ended in, read only from then on: the type graph's
	// decode of what it found lends it instead of parsing it again.
	foundTable atomic.Pointer[abbrevSlot]
	// Missing (main Debug only): debug files the DWARF refers to that were
	// not found, with where they were looked for (Lookup.AllowMissing).
	Missing []string
}

// Close releases a separate debug file, every part's file, and the input
// when OpenDebug opened it.
func (d *Debug) Close() error {
	if d == nil {
		return nil
	}
	var errs []error
	for _, p := range d.parts {
		errs = append(errs, p.Close())
	}
	d.parts = nil
	if d.owned != nil {
		errs = append(errs, d.owned.Close())
		d.owned = nil
	}
	if d.ownsInput {
		errs = append(errs, d.Input.Close())
		d.ownsInput = false
	}
	return errors.Join(errs...)
}

// Path is the file the DWARF was read from.
func (d *Debug) Path() string { return d.File.Path }

// loadDebug reads only the sections a type lookup needs: info, abbrev and the
// string tables. Uncompressed sections of linked files are used in place (no
// copy); compressed ones are inflated; a relocatable object's are relocated.
func loadDebug(input, file *File, via string) (dbg *Debug, err error) {
	return loadDebugSuffix(input, file, via, "")
}

// loadDebugSuffix reads the sections named .debug_<name><suffix>: suffix is
// ".dwo" for a split unit's file.
func loadDebugSuffix(input, file *File, via, suffix string) (dbg *Debug, err error) {
	d := &Debug{Input: input, File: file, Via: via, order: file.File.ByteOrder, dwo: suffix != ""}
	get := func(name string) ([]byte, error) { return file.debugSection(name + suffix) }
	z, err := file.debugStream("info" + suffix)
	if err != nil {
		return nil, err
	}
	if z != nil {
		d.infoZ, d.info = z, z.Bytes()
	} else if d.info, err = get("info"); err != nil {
		return nil, err
	}
	if z, err = file.debugStream("abbrev" + suffix); err != nil {
		return nil, err
	}
	if z != nil {
		d.abbrevZ, d.abbrev = z, z.Bytes()
	} else if d.abbrev, err = get("abbrev"); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		name string
		dst  *[]byte
	}{
		{"str", &d.str},
		{"str_offsets", &d.strOffsets}, {"line_str", &d.lineStr}, {"addr", &d.addr},
	} {
		b, err := get(s.name)
		if err != nil {
			return nil, err
		}
		*s.dst = b
	}
	if len(d.info) == 0 {
		return nil, InputErrorf(file.Path, "no DWARF: .debug_info%s is empty", suffix)
	}
	if len(d.abbrev) == 0 {
		return nil, InputErrorf(file.Path, "corrupted DWARF: .debug_info%s without .debug_abbrev%s", suffix, suffix)
	}
	return d, nil
}

// ensure inflates a compressed section (d.infoZ or d.abbrevZ) through byte
// end, clamped to the section; a section stored plain (nil) is all there.
func (d *Debug) ensure(z *stream, end int) error {
	if z == nil {
		return nil
	}
	if err := z.Ensure(end); err != nil {
		return InputErrorf(d.File.Path, "cannot decompress: %w", err)
	}
	return nil
}

// abbrevShort reports whether a table read up to end ran into bytes of
// .debug_abbrev not inflated yet (they read as zeros, which end a table).
func (d *Debug) abbrevShort(end int) bool {
	return d.abbrevZ != nil && end > d.abbrevZ.Avail() && d.abbrevZ.Avail() < len(d.abbrev)
}

// DWARFData builds a debug/dwarf view of the main file's DWARF, for a
// reader that walks DIEs other than types (the release workflow's
// prototypes of a library's functions); types are read through Types. It
// is made on first use: dwarf.New parses every unit's abbreviations up
// front.
func (d *Debug) DWARFData() (data *dwarf.Data, err error) {
	if d.Data != nil {
		return d.Data, nil
	}
	if err := d.ensure(d.infoZ, len(d.info)); err != nil {
		return nil, err
	}
	if err := d.ensure(d.abbrevZ, len(d.abbrev)); err != nil {
		return nil, err
	}
	data, err = dwarf.New(d.goAbbrev(), nil, nil, d.info, nil, nil, nil, d.str)
	if err != nil {
		return nil, InputErrorf(d.File.Path, "corrupted DWARF: %w", err)
	}
	for name, b := range map[string][]byte{".debug_str_offsets": d.goStrOffsets(), ".debug_line_str": d.lineStr, ".debug_addr": d.addr} {
		if len(b) > 0 {
			if err := data.AddSection(name, b); err != nil {
				return nil, InputErrorf(d.File.Path, "corrupted DWARF section %s: %w", name, err)
			}
		}
	}
	d.Data = data
	return data, nil
}

// debugStream returns a Stream over .debug_<name> (or .zdebug_<name>) when
// it is compressed in a linked file; nil when it is stored plain or absent,
// or the file is relocatable (relocations need the whole section).
func (o *File) debugStream(name string) (*stream, error) {
	if o.File.Type == elf.ET_REL {
		return nil, nil
	}
	s, z := o.dwarfSection(name)
	if s == nil {
		return nil, nil
	}
	limit := inflateCap(int64(len(o.data)))
	var st *stream
	var err error
	switch {
	case s.Flags&elf.SHF_COMPRESSED != 0:
		st, err = newStream(s.Name, o.compressedReader(s), s.Size, limit)
	case z:
		raw := o.sectionBytes(s)
		if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
			return nil, InputErrorf(o.Path, "corrupted compressed section %s (no ZLIB header)", s.Name)
		}
		zr, zerr := zlib.NewReader(bytes.NewReader(raw[12:]))
		if zerr != nil {
			return nil, InputErrorf(o.Path, "cannot decompress %s: %w", s.Name, zerr)
		}
		st, err = newStream(s.Name, zr, binary.BigEndian.Uint64(raw[4:12]), limit)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, InputErrorf(o.Path, "cannot decompress: %w", err)
	}
	return st, nil
}

// compressedReader inflates an SHF_COMPRESSED section. zlib, what gcc and
// the Go linker write, goes through klauspost/compress, whose inflater
// takes about a quarter less CPU than the standard library's on libc6-dbg's
// .debug_info (measured: docs/benchmarks.md#what-the-floor-work-bought);
// other kinds (zstd) through debug/elf. s.Size is the size the compression
// header declares.
func (o *File) compressedReader(s *elf.Section) io.Reader {
	raw := o.sectionBytes(s)
	hdr := 24 // Elf64_Chdr
	if o.File.Class == elf.ELFCLASS32 {
		hdr = 12
	}
	if len(raw) > hdr && elf.CompressionType(o.File.ByteOrder.Uint32(raw)) == elf.COMPRESS_ZLIB {
		zr, err := zlib.NewReader(bytes.NewReader(raw[hdr:]))
		if err != nil {
			return errReader{err}
		}
		return zr
	}
	return s.Open()
}

// errReader is a stream that fails at once (a zlib header that is bad).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// dwarfSection finds .debug_<name>, else the old-style compressed
// .zdebug_<name> (z true); nil when absent or without bytes in the file.
func (o *File) dwarfSection(name string) (s *elf.Section, z bool) {
	if s = o.File.Section(".debug_" + name); s == nil {
		if s = o.File.Section(".zdebug_" + name); s == nil {
			return nil, false
		}
		z = true
	}
	if s.Type == elf.SHT_NOBITS {
		return nil, false
	}
	return s, z
}

// debugSection returns .debug_<name> (or .zdebug_<name>), decompressed and
// relocated as needed; nil when absent.
func (o *File) debugSection(name string) ([]byte, error) {
	s, z := o.dwarfSection(name)
	if s == nil {
		return nil, nil
	}
	if o.File.Type == elf.ET_REL && !z && (name == "info" || name == "types") {
		if b, many, err := o.groupedSections(s.Name); many || err != nil {
			return b, err
		}
	}
	return o.sectionData(s, z)
}

// groupedSections: a relocatable object compiled with
// -fdebug-types-section holds one .debug_info (DWARF 5) or .debug_types
// (DWARF 4) section per type unit, each in its own COMDAT group for the
// linker to merge; they are read as the linker would concatenate them,
// each relocated on its own (docs/nrtabi-extract.md#type-units). many is
// false when the object has one section of the name.
func (o *File) groupedSections(name string) (b []byte, many bool, err error) {
	var all []*elf.Section
	for _, s := range o.File.Sections {
		if s.Name == name && s.Type != elf.SHT_NOBITS {
			all = append(all, s)
		}
	}
	if len(all) < 2 {
		return nil, false, nil
	}
	var total uint64
	for _, s := range all {
		total += s.Size
	}
	if total > inflateCap(int64(len(o.data))) {
		return nil, true, InputErrorf(o.Path, "its %d %s sections claim %d bytes, more than a %d-byte file holds", len(all), name, total, len(o.data))
	}
	for _, s := range all {
		one, err := o.sectionData(s, false)
		if err != nil {
			return nil, true, err
		}
		b = append(b, one...)
	}
	return b, true, nil
}

// sectionData is one debug section's bytes, decompressed and relocated as
// needed.
func (o *File) sectionData(s *elf.Section, z bool) ([]byte, error) {
	// A compressed section is inflated to exactly its declared size, and
	// only when that size is within a cap proportional to the file.
	limit := inflateCap(int64(len(o.data)))
	var b []byte
	switch {
	case s.Flags&elf.SHF_COMPRESSED != 0:
		// debug/elf inflates SHF_COMPRESSED (zlib and zstd); s.Size is the
		// size its header declares.
		out, err := inflate(s.Name, o.compressedReader(s), s.Size, limit)
		if err != nil {
			return nil, InputErrorf(o.Path, "cannot decompress: %w", err)
		}
		b = out
	case z:
		raw := o.sectionBytes(s)
		if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
			return nil, InputErrorf(o.Path, "corrupted compressed section %s (no ZLIB header)", s.Name)
		}
		n := binary.BigEndian.Uint64(raw[4:12])
		zr, err := zlib.NewReader(bytes.NewReader(raw[12:]))
		if err != nil {
			return nil, InputErrorf(o.Path, "cannot decompress %s: %w", s.Name, err)
		}
		out, err := inflate(s.Name, zr, n, limit)
		if err != nil {
			return nil, InputErrorf(o.Path, "cannot decompress: %w", err)
		}
		b = out
	default:
		b = o.sectionBytes(s)
	}
	if o.File.Type == elf.ET_REL {
		return o.relocate(s, b)
	}
	return b, nil
}

// relocate applies the RELA relocations that target a debug section of a
// relocatable object (string and section offsets are relocations there).
func (o *File) relocate(target *elf.Section, b []byte) ([]byte, error) {
	var rels []*elf.Section
	for _, s := range o.File.Sections {
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && int(s.Info) < len(o.File.Sections) && o.File.Sections[s.Info] == target {
			rels = append(rels, s)
		}
	}
	if len(rels) == 0 {
		return b, nil
	}
	if o.File.Machine != elf.EM_X86_64 || o.File.Class != elf.ELFCLASS64 {
		return nil, InputErrorf(o.Path, "relocatable %s objects are not supported (x86-64 only); check the linked file instead", o.File.Machine)
	}
	syms, err := o.File.Symbols()
	if err != nil {
		return nil, InputErrorf(o.Path, "corrupted symbol table: %w", err)
	}
	out := make([]byte, len(b))
	copy(out, b)
	bo := o.File.ByteOrder
	for _, rs := range rels {
		if rs.Type != elf.SHT_RELA {
			return nil, InputErrorf(o.Path, "%s: REL relocations on x86-64 are not supported", rs.Name)
		}
		rb := o.sectionBytes(rs)
		for i := 0; i+24 <= len(rb); i += 24 {
			off := bo.Uint64(rb[i:])
			info := bo.Uint64(rb[i+8:])
			add := int64(bo.Uint64(rb[i+16:]))
			symIdx, typ := info>>32, elf.R_X86_64(info&0xffffffff)
			var sv uint64
			if symIdx > 0 {
				if int(symIdx-1) >= len(syms) {
					return nil, InputErrorf(o.Path, "%s: relocation names symbol %d of %d", rs.Name, symIdx, len(syms))
				}
				sv = syms[symIdx-1].Value
			}
			v := uint64(int64(sv) + add)
			switch typ {
			case elf.R_X86_64_NONE:
			case elf.R_X86_64_64:
				if uint64(len(out)) < 8 || off > uint64(len(out))-8 {
					return nil, InputErrorf(o.Path, "%s: relocation at %#x is outside %s", rs.Name, off, target.Name)
				}
				bo.PutUint64(out[off:], v)
			case elf.R_X86_64_32, elf.R_X86_64_32S:
				if uint64(len(out)) < 4 || off > uint64(len(out))-4 {
					return nil, InputErrorf(o.Path, "%s: relocation at %#x is outside %s", rs.Name, off, target.Name)
				}
				bo.PutUint32(out[off:], uint32(v))
			default:
				// Other types (TLS offsets in location expressions) only touch
				// attributes a layout lookup never reads.
			}
		}
	}
	return out, nil
}
