package pkgfile

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The standard library's zstd decoder (internal/zstd) is reached the one
// way Go exposes it: debug/elf's reader of an ELFCOMPRESS_ZSTD section
// (gABI, "Section Compression"). The stream is given a made-up ELF header,
// two section headers and a compression header in front of it, and the
// section is opened. This is what lets the binary do without
// klauspost/compress/zstd, whose package init builds a CRC-32C table
// that was 39% of every command's start-up instructions
// (docs/benchmarks.md#start-up-2026-12-04).
//
// The decoder holds at most an 8 MiB window (it clamps a frame's
// Window_Descriptor to that, as RFC 8878 section 3.1.1.1.2 permits), a
// 128 KiB block and its input, whatever a frame declares: its memory is
// bounded by construction. A frame that refers back further than that
// window fails with "offset past window", named by windowMsg.

// zstdWindow is the window the standard decoder holds (internal/zstd's
// maxWindowSize).
const zstdWindow = 8 << 20

// The made-up file: ELF header, then the section headers (the null one
// and the stream's), then the Chdr64 and the stream.
const (
	ehdrSize  = 64
	shdrSize  = 64
	chdrSize  = 24
	zstdAt    = ehdrSize + 2*shdrSize + chdrSize
	shfCompr  = 0x800 // SHF_COMPRESSED
	elfcZstd  = 2     // ELFCOMPRESS_ZSTD
	shtProgbi = 1     // SHT_PROGBITS
)

// elfView is the made-up ELF file: head, then src.
type elfView struct {
	head []byte
	src  *io.SectionReader
}

func (v *elfView) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < int64(len(v.head)) {
		n = copy(p, v.head[off:])
		if n == len(p) {
			return n, nil
		}
		off = int64(len(v.head))
	}
	m, err := v.src.ReadAt(p[n:], off-int64(len(v.head)))
	return n + m, err
}

// zstdHead is the ELF header, section headers and compression header put
// before a zstd stream of size bytes.
func zstdHead(size int64) []byte {
	h := make([]byte, zstdAt)
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = 2, 1, 1 // ELFCLASS64, ELFDATA2LSB, EV_CURRENT
	le := binary.LittleEndian
	le.PutUint16(h[16:], 1)        // e_type ET_REL
	le.PutUint16(h[18:], 62)       // e_machine EM_X86_64 (any would do)
	le.PutUint32(h[20:], 1)        // e_version
	le.PutUint64(h[40:], ehdrSize) // e_shoff
	le.PutUint16(h[52:], ehdrSize) // e_ehsize
	le.PutUint16(h[58:], shdrSize) // e_shentsize
	le.PutUint16(h[60:], 2)        // e_shnum; e_shstrndx 0: no names
	s := h[ehdrSize+shdrSize:]
	le.PutUint32(s[4:], shtProgbi)
	le.PutUint64(s[8:], shfCompr)
	le.PutUint64(s[24:], ehdrSize+2*shdrSize)
	le.PutUint64(s[32:], uint64(chdrSize+size))
	le.PutUint64(s[48:], 1) // sh_addralign
	c := h[ehdrSize+2*shdrSize:]
	le.PutUint32(c[0:], elfcZstd)
	// ch_size is what debug/elf reports as the section's size; nothing
	// here reads it (the budget bounds the output), so it says "unknown"
	// as large as it may.
	le.PutUint64(c[8:], 1<<62)
	le.PutUint64(c[16:], 1) // ch_addralign
	return h
}

// zstdReader is src, one or more zstd frames (skippable ones passed
// over), decompressed.
func zstdReader(src *io.SectionReader) (io.Reader, error) {
	f, err := elf.NewFile(&elfView{head: zstdHead(src.Size()), src: src})
	if err != nil {
		// Only if zstdHead were wrong: the header is ours, not the input's.
		return nil, fmt.Errorf("the zstd reader's ELF view: %w", err)
	}
	if len(f.Sections) != 2 {
		return nil, fmt.Errorf("the zstd reader's ELF view has %d sections, not 2", len(f.Sections))
	}
	return &zstdErrs{f.Sections[1].Open()}, nil
}

// errWindow is a frame that needs a longer window than the decoder holds.
var errWindow = errors.New("a zstd frame refers back further than the 8 MiB window this reader holds (written with zstd --long, or --ultra at -20 or above); repack with zstd -19 or lower without --long (docs/packages.md#bounds)")

// zstdErrs names the decoder's errors that have a fix.
type zstdErrs struct{ r io.Reader }

func (z *zstdErrs) Read(b []byte) (int, error) {
	n, err := z.r.Read(b)
	if err != nil && err != io.EOF && strings.Contains(err.Error(), "offset past window") {
		err = fmt.Errorf("%w (%v)", errWindow, err)
	}
	return n, err
}

// zstdChecksum says whether err is the decoder's content checksum
// failing: internal/zstd's "invalid checksum" (TestCrafted plants one).
func zstdChecksum(err error) bool {
	return strings.Contains(err.Error(), "zstd decompression error") && strings.Contains(err.Error(), "invalid checksum")
}
