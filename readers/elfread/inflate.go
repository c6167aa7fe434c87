package elfread

import (
	"fmt"
	"io"
)

// inflateRatio bounds what a compressed section may inflate to: at most
// this many times the size of the whole file. zlib cannot exceed ~1032:1;
// gcc's DWARF compresses 3-10:1, so 64 leaves room for any real file and
// keeps a decompression bomb from exhausting memory.
const inflateRatio = 64

// inflateMin is the cap for small files (their ratio cap would refuse even
// a tiny section).
const inflateMin = 16 << 20

// inflateCap is the most a compressed section of a file of fileSize bytes
// may inflate to.
func inflateCap(fileSize int64) uint64 {
	return max(uint64(fileSize)*inflateRatio, inflateMin)
}

// Inflate reads exactly declared bytes from r, the decompressing reader of
// section. A declared size over limit is refused before anything is
// allocated; a stream that ends early or goes on past declared is corrupt.
func inflate(section string, r io.Reader, declared, limit uint64) ([]byte, error) {
	z, err := newStream(section, r, declared, limit)
	if err != nil {
		return nil, err
	}
	if err := z.Ensure(len(z.buf)); err != nil {
		return nil, err
	}
	return z.buf, nil
}

// streamChunk is how far past the bytes asked for a stream inflates at
// once, so that a scan reading unit after unit does not call the
// decompressor per unit.
const streamChunk = 64 << 10

// stream inflates a compressed section on demand: Ensure(n) inflates up to
// byte n and no further, so a scan that finds what it wants in the first
// units never pays for the rest. The buffer is the declared size (refused
// over the cap before anything is allocated, like Inflate); its pages are
// touched only as they are filled, and the stream is held to the declared
// size exactly once it has been read to the end.
type stream struct {
	section string
	buf     []byte
	avail   int
	r       io.Reader
	err     error
	done    bool // read to the end and held to the declared size
}

// newStream prepares to inflate declared bytes of section from r.
func newStream(section string, r io.Reader, declared, limit uint64) (*stream, error) {
	if declared > limit {
		return nil, fmt.Errorf("%s declares %d bytes uncompressed, over the cap of %d (%d times the file, at least %d MB); refusing a likely decompression bomb",
			section, declared, limit, inflateRatio, inflateMin>>20)
	}
	return &stream{section: section, buf: make([]byte, declared), r: r}, nil
}

// Bytes is the whole section: valid up to Avail, zero beyond.
func (z *stream) Bytes() []byte { return z.buf }

// Avail is how many bytes have been inflated.
func (z *stream) Avail() int { return z.avail }

// Ensure inflates at least the first n bytes (n is clamped to the declared
// size). The first failure sticks.
func (z *stream) Ensure(n int) error {
	if z.err != nil || z.done || n <= z.avail && z.avail < len(z.buf) {
		return z.err
	}
	goal := min(max(n, z.avail+streamChunk), len(z.buf))
	if _, err := io.ReadFull(z.r, z.buf[z.avail:goal]); err != nil {
		z.err = fmt.Errorf("%s: inflates to less than its declared %d bytes (%w)", z.section, len(z.buf), err)
		return z.err
	}
	z.avail = goal
	if z.avail == len(z.buf) {
		z.done = true
		var one [1]byte
		if n, _ := z.r.Read(one[:]); n > 0 {
			z.err = fmt.Errorf("%s inflates to more than its declared %d bytes", z.section, len(z.buf))
		}
	}
	return z.err
}
