package hostile

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// StructName is the struct every crafted object defines: a struct of the
// embedded 2.31.24 spec, so `check` and `release new` look for it too.
const StructName = "nrt_version_t"

// ELFCase is one crafted object.
type ELFCase struct {
	Name string
	Path string
}

// DWARF 4 abbreviations of the hand-written units (DWARF 5 §7.5).
const abbrevs = `
	.section .debug_abbrev,"",@progbits
	.uleb128 1; .uleb128 0x11; .byte 1      # compile_unit, children
	.uleb128 0x25; .uleb128 0x08            # producer: string
	.uleb128 0x13; .uleb128 0x0b            # language: data1
	.byte 0, 0
	.uleb128 2; .uleb128 0x13; .byte 1      # structure_type, children
	.uleb128 0x03; .uleb128 0x08            # name: string
	.uleb128 0x0b; .uleb128 0x0f            # byte_size: udata
	.byte 0, 0
	.uleb128 3; .uleb128 0x0d; .byte 0      # member
	.uleb128 0x03; .uleb128 0x08            # name: string
	.uleb128 0x49; .uleb128 0x13            # type: ref4
	.uleb128 0x38; .uleb128 0x0f            # data_member_location: udata
	.byte 0, 0
	.uleb128 4; .uleb128 0x24; .byte 0      # base_type
	.uleb128 0x03; .uleb128 0x08
	.uleb128 0x0b; .uleb128 0x0b
	.uleb128 0x3e; .uleb128 0x0b            # encoding: data1
	.byte 0, 0
	.uleb128 5; .uleb128 0x01; .byte 1      # array_type, children
	.uleb128 0x49; .uleb128 0x13
	.byte 0, 0
	.uleb128 6; .uleb128 0x21; .byte 0      # subrange_type
	.uleb128 0x37; .uleb128 0x0f            # count: udata
	.byte 0, 0
	.uleb128 7; .uleb128 0x0f; .byte 0      # pointer_type
	.uleb128 0x0b; .uleb128 0x0b
	.uleb128 0x49; .uleb128 0x13
	.byte 0, 0
	.uleb128 8; .uleb128 0x34; .byte 0      # variable
	.uleb128 0x03; .uleb128 0x08
	.uleb128 0x02; .uleb128 0x18            # location: exprloc
	.byte 0, 0
	.byte 0
`

// unit wraps DIEs in a DWARF 4 compile unit (.Lcu is the unit's start, the
// base of ref4 references).
func unit(dies string) string {
	return abbrevs + `
	.section .debug_info,"",@progbits
.Lcu:
	.long .Lend - .Lstart
.Lstart:
	.value 4
	.long 0
	.byte 8
	.uleb128 1; .string "hostile"; .byte 0x0c
` + dies + `
	.byte 0
.Lend:
`
}

const intType = `
.Lint:	.uleb128 4; .string "int"; .byte 4; .byte 5
`

func structOf(size int, member string) string {
	return fmt.Sprintf(`
.Lstruct: .uleb128 2; .string "%s"; .uleb128 %d
	.uleb128 3; .string "m"; .long %s - .Lcu; .uleb128 0
	.byte 0
`, StructName, size, member)
}

// dwarfSources are the hand-written DWARF of the cyclic and overlong cases.
var dwarfSources = map[string]string{
	// A struct whose member is the struct itself.
	"cyclic-struct": unit(structOf(8, ".Lstruct")),
	// An array whose element type is the array itself.
	"cyclic-array": unit(intType + `
.Larr:	.uleb128 5; .long .Larr - .Lcu
	.uleb128 6; .uleb128 2
	.byte 0
` + structOf(8, ".Larr")),
	// A pointer to itself.
	"cyclic-pointer": unit(`
.Lptr:	.uleb128 7; .byte 8; .long .Lptr - .Lcu
` + structOf(8, ".Lptr")),
	// A chain of distinct pointer types, each to the next: a reader that
	// recursed once per type (the godwarf reader did) overflows the
	// goroutine's stack on two million of them, a fatal error no recover
	// catches; the type model's front end builds it without recursion. Each DIE is 6 bytes (code,
	// byte size, ref4 to the next).
	"type-chain": unit(`
.Lchain:
	.rept 50000
	.uleb128 7; .byte 8; .long . + 4 - .Lcu
	.endr
` + intType + structOf(8, ".Lchain")),
	// An exprloc whose ULEB128 length is 2^63: as a signed int it jumps
	// backwards.
	"exprloc-2^63": unit(`
	.uleb128 8; .string "v"; .byte 0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x01
` + intType + structOf(4, ".Lint")),
	// 2^64-13: as a signed int it steps back the 13 bytes of its own DIE
	// (code, "v", the length), so the scan once read that DIE forever.
	"exprloc-loop": unit(`
	.uleb128 8; .string "v"; .byte 0xf3,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0x01
` + intType + structOf(4, ".Lint")),
}

// bigArraySource is legitimate C with a member larger than any spec struct.
const bigArraySource = `struct ` + StructName + ` { char a; char pad[1L << 40]; int z; };
struct ` + StructName + ` *hostile_use;
`

// BombSize is what the decompression bombs of the command-line test inflate
// to: 1 GiB, past what a 2 GiB address space can hold twice.
const BombSize = 1 << 30

// Build writes every crafted object into dir and returns them; the
// decompression bombs inflate to bombSize bytes. It needs gcc and objcopy.
func Build(dir string, bombSize int) ([]ELFCase, error) {
	var out []ELFCase
	for _, name := range []string{"cyclic-struct", "cyclic-array", "cyclic-pointer", "type-chain", "exprloc-2^63", "exprloc-loop"} {
		p, err := assemble(dir, name, dwarfSources[name])
		if err != nil {
			return nil, err
		}
		out = append(out, ELFCase{name, p})
	}
	big := filepath.Join(dir, "big-array.o")
	if err := os.WriteFile(filepath.Join(dir, "big-array.c"), []byte(bigArraySource), 0o644); err != nil {
		return nil, err
	}
	if err := cc.Object(dir, "big-array.c", big); err != nil {
		return nil, err
	}
	out = append(out, ELFCase{"big-array", big})
	bomb, err := zlibZeros(bombSize)
	if err != nil {
		return nil, err
	}
	// SHF_COMPRESSED: a header declaring 100 bytes, then the bomb.
	shf, err := assemble(dir, "bomb-shf", dwarfSources["cyclic-struct"])
	if err != nil {
		return nil, err
	}
	chdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(chdr, uint32(elf.COMPRESS_ZLIB))
	binary.LittleEndian.PutUint64(chdr[8:], 100)
	binary.LittleEndian.PutUint64(chdr[16:], 1)
	if err := ReplaceSection(shf, ".debug_info", append(chdr, bomb...), uint64(elf.SHF_COMPRESSED)); err != nil {
		return nil, err
	}
	out = append(out, ELFCase{"bomb-shf-compressed", shf})
	// .zdebug_info: "ZLIB", a big-endian size of 100, then the bomb.
	zsrc := strings.Replace(dwarfSources["cyclic-struct"], ".section .debug_info,", ".section .zdebug_info,", 1)
	zd, err := assemble(dir, "bomb-zdebug", zsrc)
	if err != nil {
		return nil, err
	}
	zhdr := append([]byte("ZLIB"), make([]byte, 8)...)
	binary.BigEndian.PutUint64(zhdr[4:], 100)
	if err := ReplaceSection(zd, ".zdebug_info", append(zhdr, bomb...), 0); err != nil {
		return nil, err
	}
	out = append(out, ELFCase{"bomb-zdebug", zd})
	links, err := debugLinks(dir)
	if err != nil {
		return nil, err
	}
	return append(out, links...), nil
}

// debugLinks makes a FIFO given as the input, and objects without DWARF
// whose .gnu_debuglink names a FIFO: one by a plain name next to the
// object, one by a path that climbs out of every debug directory. Opening a
// FIFO for reading blocks until a writer comes: nrtabi once hung on each.
func debugLinks(dir string) ([]ELFCase, error) {
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{filepath.Join(dir, "outside.debug"), filepath.Join(sub, "next.debug"), filepath.Join(dir, "input.fifo")} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if err := syscall.Mkfifo(f, 0o644); err != nil {
			return nil, err
		}
	}
	out := []ELFCase{{"fifo-input", filepath.Join(dir, "input.fifo")}}
	src := filepath.Join(sub, "plain.c")
	if err := os.WriteFile(src, []byte("int hostile_plain(void) { return 1; }\n"), 0o644); err != nil {
		return nil, err
	}
	for _, c := range []struct{ name, link string }{{"debuglink-fifo", "next.debug"}, {"debuglink-escape", "../outside.debug"}} {
		o := filepath.Join(sub, c.name+".o")
		if err := cc.Run(sub, "-c", "-o", o, src); err != nil {
			return nil, err
		}
		content := append([]byte(c.link), 0)
		for len(content)%4 != 0 {
			content = append(content, 0)
		}
		content = append(content, 0, 0, 0, 0) // CRC: never reached
		sec := filepath.Join(sub, c.name+".link")
		if err := os.WriteFile(sec, content, 0o644); err != nil {
			return nil, err
		}
		if err := runObjcopy("--add-section", ".gnu_debuglink="+sec, o); err != nil {
			return nil, err
		}
		out = append(out, ELFCase{c.name, o})
	}
	return out, nil
}

func runObjcopy(args ...string) error {
	out, err := exec.Command("objcopy", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("objcopy %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func assemble(dir, name, src string, flags ...string) (string, error) {
	s := filepath.Join(dir, name+".s")
	o := filepath.Join(dir, name+".o")
	if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
		return "", err
	}
	args := append(append([]string{"-c"}, flags...), "-o", o, s)
	return o, cc.Run(dir, args...)
}

// zlibZeros is a zlib stream of n zero bytes. Past 1 MiB it is built
// without compressing n bytes: deflate one flushed MiB of zeros after a
// first one, repeat that block (its back-references reach only zeros), then
// close with an empty final block and the Adler-32 of n zeros.
func zlibZeros(n int) ([]byte, error) {
	const chunk = 1 << 20
	var buf bytes.Buffer
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	if err != nil {
		return nil, err
	}
	if n < 2*chunk || n%chunk != 0 {
		if _, err := zw.Write(make([]byte, n)); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	zero := make([]byte, chunk)
	if _, err := zw.Write(zero); err != nil {
		return nil, err
	}
	if err := zw.Flush(); err != nil {
		return nil, err
	}
	first := append([]byte(nil), buf.Bytes()...)
	buf.Reset()
	if _, err := zw.Write(zero); err != nil {
		return nil, err
	}
	if err := zw.Flush(); err != nil {
		return nil, err
	}
	block := append([]byte(nil), buf.Bytes()...)
	out := append([]byte(nil), first...)
	for i := 1; i < n/chunk; i++ {
		out = append(out, block...)
	}
	out = append(out, 0x01, 0x00, 0x00, 0xff, 0xff) // final, stored, empty
	// Adler-32 of n zeros: a stays 1, b adds a for every byte.
	adler := uint32(n%65521)<<16 | 1
	return binary.BigEndian.AppendUint32(out, adler), nil
}

// ReplaceSection gives the named section of a 64-bit little-endian ELF file
// new contents, appended at the end of the file (the old bytes stay,
// unused), and adds flags to its sh_flags.
func ReplaceSection(path, name string, content []byte, flags uint64) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return err
	}
	idx := -1
	for i, s := range ef.Sections {
		if s.Name == name {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("%s has no section %s", path, name)
	}
	shoff := binary.LittleEndian.Uint64(data[0x28:])
	shentsize := uint64(binary.LittleEndian.Uint16(data[0x3a:]))
	for len(data)%16 != 0 {
		data = append(data, 0)
	}
	hdr := shoff + uint64(idx)*shentsize
	binary.LittleEndian.PutUint64(data[hdr+0x08:], binary.LittleEndian.Uint64(data[hdr+0x08:])|flags)
	binary.LittleEndian.PutUint64(data[hdr+0x18:], uint64(len(data)))
	binary.LittleEndian.PutUint64(data[hdr+0x20:], uint64(len(content)))
	return os.WriteFile(path, append(data, content...), 0o644)
}
