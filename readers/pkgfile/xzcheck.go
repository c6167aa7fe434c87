package pkgfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxDict bounds the LZMA2 dictionary an xz stream may ask for: xz -9 uses
// 64 MiB. The decoder allocates what a block header asks for, up to 4 GiB
// from a 200-byte stream, so every block header is read first (xzCheck).
const maxDict = 64 << 20

// maxXZIndex bounds the index of one xz stream, read into memory: a record
// is a few bytes a block, and xz's blocks are megabytes.
const maxXZIndex = 16 << 20

// xzCheck walks the structure of the xz streams filling src before anything
// is decoded (docs/packages.md#bounds): streams back to back, as xz writes
// when its outputs are concatenated, each with stream padding after it,
// each stream's index, and every block header's filters, refusing a
// dictionary over maxDict. It reads from the end (an index sits behind its
// blocks) and returns the uncompressed size the indexes declare, so a bomb
// is refused before a byte is decoded.
func xzCheck(src io.ReaderAt) (int64, error) {
	end := src.(interface{ Size() int64 }).Size()
	var total int64
	for streams := 0; ; streams++ {
		var err error
		if end, err = trimPadding(src, end); err != nil {
			return 0, err
		}
		if end == 0 && streams > 0 {
			return total, nil
		}
		start, n, err := xzStream(src, end)
		if err != nil {
			if streams > 0 {
				err = fmt.Errorf("stream %d from the end: %w", streams+1, err)
			}
			return 0, err
		}
		if total += n; total < 0 {
			return 0, errors.New("xz indexes declare more than 2^63 bytes")
		}
		end = start
	}
}

// xzStream checks the one stream that ends at end and returns where it
// starts and the uncompressed size its index declares.
func xzStream(src io.ReaderAt, end int64) (int64, int64, error) {
	if end < 32 {
		return 0, 0, errors.New("xz stream shorter than its header, index and footer (truncated)")
	}
	var foot [12]byte
	if _, err := src.ReadAt(foot[:], end-12); err != nil {
		return 0, 0, err
	}
	if string(foot[10:]) != "YZ" {
		return 0, 0, errors.New("xz stream without its footer (truncated, or something else follows)")
	}
	back := (int64(binary.LittleEndian.Uint32(foot[4:])) + 1) * 4
	idxAt := end - 12 - back
	if idxAt < 12 {
		return 0, 0, errors.New("xz footer's index size points before the first block")
	}
	if back > maxXZIndex {
		return 0, 0, fmt.Errorf("xz index of %d bytes, more than %d", back, maxXZIndex)
	}
	idx := make([]byte, back)
	if _, err := src.ReadAt(idx, idxAt); err != nil {
		return 0, 0, err
	}
	if len(idx) < 8 || idx[0] != 0 {
		return 0, 0, errors.New("xz index does not start with its indicator")
	}
	p := 1
	n, ok := uvarint(idx, &p)
	if !ok || n > uint64(len(idx)) {
		return 0, 0, errors.New("xz index's record count is corrupt")
	}
	type rec struct{ unpadded, size int64 }
	recs := make([]rec, 0, n)
	var total, blocks int64
	for i := uint64(0); i < n; i++ {
		unpadded, ok1 := uvarint(idx, &p)
		size, ok2 := uvarint(idx, &p)
		if !ok1 || !ok2 || unpadded > uint64(idxAt) || size > 1<<62 {
			return 0, 0, errors.New("xz index record is corrupt")
		}
		recs = append(recs, rec{int64(unpadded), int64(size)})
		total += int64(size)
		blocks += (int64(unpadded) + 3) &^ 3
		if total < 0 || blocks > idxAt-12 {
			return 0, 0, errors.New("xz index records overrun the stream")
		}
	}
	start := idxAt - blocks - 12
	var magic [6]byte
	if _, err := src.ReadAt(magic[:], start); err != nil {
		return 0, 0, err
	}
	if string(magic[:]) != "\xfd7zXZ\x00" {
		return 0, 0, errors.New("xz blocks and index do not meet (no stream header where the index says the stream starts)")
	}
	at := start + 12
	for i, rc := range recs {
		hb := make([]byte, min(1024, idxAt-at))
		if _, err := src.ReadAt(hb, at); err != nil {
			return 0, 0, err
		}
		if err := xzBlockHeader(hb); err != nil {
			return 0, 0, fmt.Errorf("xz block %d: %w", i, err)
		}
		at += (rc.unpadded + 3) &^ 3
	}
	return start, total, nil
}

// xzBlockHeader checks one block header's filter chain.
func xzBlockHeader(b []byte) error {
	if len(b) < 1 || b[0] == 0 {
		return errors.New("no block header")
	}
	size := (int(b[0]) + 1) * 4
	if size > len(b) {
		return errors.New("block header past the index")
	}
	h := b[:size-4]
	p := 2
	flags := h[1]
	for _, bit := range []byte{0x40, 0x80} {
		if flags&bit != 0 {
			if _, ok := uvarint(h, &p); !ok {
				return errors.New("corrupt block header")
			}
		}
	}
	for f := 0; f <= int(flags&3); f++ {
		id, ok1 := uvarint(h, &p)
		np, ok2 := uvarint(h, &p)
		if !ok1 || !ok2 || np > uint64(len(h)-p) {
			return errors.New("corrupt filter flags")
		}
		props := h[p : p+int(np)]
		p += int(np)
		if id == 0x21 {
			if len(props) != 1 || props[0] > 40 {
				return errors.New("corrupt LZMA2 properties")
			}
			d := props[0]
			dict := int64(2|d&1) << (d/2 + 11)
			if dict > maxDict {
				return fmt.Errorf("asks for a %d MiB dictionary, more than the %d MiB xz -9 uses; refused rather than allocated", dict>>20, maxDict>>20)
			}
		}
	}
	return nil
}

// trimPadding is where data ends before the xz stream padding (zero bytes
// in fours) that ends at end, read backwards in chunks.
func trimPadding(src io.ReaderAt, end int64) (int64, error) {
	buf := make([]byte, 64<<10)
	zeros := int64(0)
	for at := end; at > 0; {
		n := min(int64(len(buf)), at)
		b := buf[:n]
		if _, err := src.ReadAt(b, at-n); err != nil {
			return 0, err
		}
		i := len(b) - 1
		for i >= 0 && b[i] == 0 {
			i--
		}
		zeros += int64(len(b) - 1 - i)
		if i >= 0 {
			break
		}
		at -= n
	}
	return end - zeros&^3, nil
}

// uvarint reads an xz multibyte integer (at most 9 bytes) at *p.
func uvarint(b []byte, p *int) (uint64, bool) {
	var v uint64
	for i := 0; i < 9; i++ {
		if *p >= len(b) {
			return 0, false
		}
		c := b[*p]
		*p++
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}
