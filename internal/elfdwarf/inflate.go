package elfdwarf

import (
	"fmt"
	"io"
)

// InflateRatio bounds what a compressed section may inflate to: at most
// this many times the size of the whole file. zlib cannot exceed ~1032:1;
// gcc's DWARF compresses 3-10:1, so 64 leaves room for any real file and
// keeps a decompression bomb from exhausting memory.
const InflateRatio = 64

// InflateMin is the cap for small files (their ratio cap would refuse even
// a tiny section).
const InflateMin = 16 << 20

// InflateCap is the most a compressed section of a file of fileSize bytes
// may inflate to.
func InflateCap(fileSize int64) uint64 {
	return max(uint64(fileSize)*InflateRatio, InflateMin)
}

// Inflate reads exactly declared bytes from r, the decompressing reader of
// section. A declared size over limit is refused before anything is
// allocated; a stream that ends early or goes on past declared is corrupt.
func Inflate(section string, r io.Reader, declared, limit uint64) ([]byte, error) {
	if declared > limit {
		return nil, fmt.Errorf("%s declares %d bytes uncompressed, over the cap of %d (%d times the file, at least %d MB); refusing a likely decompression bomb",
			section, declared, limit, InflateRatio, InflateMin>>20)
	}
	out := make([]byte, declared)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("%s: inflates to less than its declared %d bytes (%v)", section, declared, err)
	}
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return nil, fmt.Errorf("%s inflates to more than its declared %d bytes", section, declared)
	}
	return out, nil
}
