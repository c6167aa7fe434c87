package pkgfile

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"

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

// open returns a reader of data decompressed as kind says ("none": as is),
// counted against the budget, and a close for the decoder's resources.
func (r *reader) open(data []byte, kind string) (io.Reader, func(), error) {
	src := bytes.NewReader(data)
	var dr io.Reader
	done := func() {}
	switch kind {
	case "none", "":
		dr = src
	case "gzip":
		z, err := gzip.NewReader(src)
		if err != nil {
			return nil, nil, err
		}
		// A .gz may hold several members back to back; gzip and tar
		// read them as one stream, and so does this.
		dr, done = z, func() { z.Close() }
	case "xz":
		total, err := xzCheck(data)
		if err != nil {
			return nil, nil, err
		}
		if total > r.budget {
			return nil, nil, errBound
		}
		z, err := xz.ReaderConfig{SingleStream: true}.NewReader(bufio.NewReader(src))
		if err != nil {
			return nil, nil, err
		}
		dr = z
	case "zstd":
		z, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(uint64(min(max(r.budget, 1), 1<<62))))
		if err != nil {
			return nil, nil, err
		}
		dr, done = z, z.Close
	case "bzip2":
		dr = bzip2.NewReader(src)
	default:
		return nil, nil, fmt.Errorf("%s compression is not read; repack with gzip, xz or zstd", kind)
	}
	return &counted{r: dr, p: r}, done, nil
}

// boundMsg is the one line for a reached bound.
func (r *reader) boundMsg() string {
	return fmt.Sprintf("decompresses to more than %d bytes, the bound for a %d-byte package (%d× its size + %d MiB; docs/packages.md#bounds): refused as a decompression bomb",
		Limit(r.size), r.size, Ratio, floor>>20)
}
