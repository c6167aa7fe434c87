package pkgfile

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// maxWindow bounds the zstd window a stream may ask for: zstd -19 uses
// 8 MiB, --long 128 MiB; a larger request is refused, not allocated.
const maxWindow = 128 << 20

// compression names the stream format data starts with, or "".
func compression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip"
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "xz"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	case len(head) >= 4 && head[0]&0xf0 == 0x50 && bytes.Equal(head[1:4], []byte{0x2a, 0x4d, 0x18}):
		// A skippable frame first (pzstd writes one before its frames;
		// RFC 8878 section 3.1.2): a zstd stream.
		return "zstd"
	case bytes.HasPrefix(head, []byte("BZh")):
		return "bzip2"
	}
	return ""
}

// errBound is the decompression bound reached.
var errBound = errors.New("decompression bound reached")

// counted counts what is read through it against the package's budget.
type counted struct {
	r io.Reader
	p *reader
}

func (c *counted) Read(b []byte) (int, error) {
	if c.p.budget <= 0 {
		// One byte more would pass the bound: see whether there is one.
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, errBound
		}
	}
	if int64(len(b)) > c.p.budget+1 {
		b = b[:c.p.budget+1]
	}
	n, err := c.r.Read(b)
	c.p.budget -= int64(n)
	c.p.pkg.Unpacked += int64(n)
	if c.p.budget < 0 {
		return n, errBound
	}
	return n, err
}

// open returns a reader of src decompressed as kind says ("none": as is),
// counted against the budget, and a close for the decoder's resources.
// The source is streamed: nothing here holds more than a decoder's window.
func (r *reader) open(src *io.SectionReader, kind string) (io.Reader, func(), error) {
	var dr io.Reader
	done := func() {}
	switch kind {
	case "none", "":
		// Not compressed: the tar reader seeks over what it skips, and
		// nothing of it counts as decompressed.
		return &countedSeeker{counted{r: src, p: r}, src}, done, nil
	case "gzip":
		z, err := gzip.NewReader(bufio.NewReaderSize(src, 64<<10))
		if err != nil {
			return nil, nil, err
		}
		// A .gz may hold several members back to back; gzip and tar
		// read them as one stream, and so does this.
		dr, done = z, func() { z.Close() }
	case "xz":
		total, err := xzCheck(src)
		if err != nil {
			return nil, nil, err
		}
		if total > r.budget {
			return nil, nil, errBound
		}
		// Several streams back to back (xz's own output when files are
		// concatenated) are one stream, as xz -d reads them; xzCheck
		// has walked each.
		z, err := xz.NewReader(bufio.NewReaderSize(src, 64<<10))
		if err != nil {
			return nil, nil, err
		}
		dr = z
	case "zstd":
		z, err := zstd.NewReader(bufio.NewReaderSize(src, 64<<10), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(uint64(min(max(r.budget, 1), 1<<62))))
		if err != nil {
			return nil, nil, err
		}
		dr, done = z, z.Close
	case "bzip2":
		dr = bzip2.NewReader(bufio.NewReaderSize(src, 64<<10))
	default:
		return nil, nil, fmt.Errorf("%s compression is not read; repack with gzip, xz or zstd", kind)
	}
	return &counted{r: dr, p: r}, done, nil
}

// countedSeeker is counted over a source that seeks: tar passes over a
// member it does not read without reading it.
type countedSeeker struct {
	counted
	s io.Seeker
}

func (c *countedSeeker) Seek(off int64, whence int) (int64, error) { return c.s.Seek(off, whence) }

// integrityError is a stream failing its own check: the bytes are corrupt.
type integrityError struct {
	kind string
	err  error
}

func (e *integrityError) Error() string {
	return fmt.Sprintf("the %s stream fails its own integrity check (%v): corrupt bytes, refused rather than read", e.kind, e.err)
}

func (e *integrityError) Unwrap() error { return e.err }

// corrupt is err as an *integrityError when it is the decoder's own check
// failing (each library's error, checked by TestChecksums), else nil.
func corrupt(kind string, err error) error {
	var se bzip2.StructuralError
	msg := err.Error()
	switch {
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, zstd.ErrCRCMismatch),
		kind == "xz" && strings.HasPrefix(msg, "xz: ") && strings.Contains(msg, "checksum"),
		errors.As(err, &se) && strings.Contains(msg, "checksum"):
		return &integrityError{kind, err}
	}
	return nil
}

// integrity is err, as an *integrityError when corrupt says so.
func integrity(kind string, err error) error {
	if ce := corrupt(kind, err); ce != nil {
		return ce
	}
	return err
}

// boundMsg is the one line for a reached bound.
func (r *reader) boundMsg() string {
	return fmt.Sprintf("decompresses to more than %d bytes, the bound for a %d-byte package (%d× its size + %d MiB; docs/packages.md#bounds): refused as a decompression bomb",
		Limit(r.size), r.size, Ratio, floor>>20)
}
