package pkgfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// maxDict bounds the LZMA2 dictionary an xz stream may ask for: xz -9 uses
// 64 MiB. The decoder allocates what a block header asks for, up to 4 GiB
// from a 200-byte stream, so every block header is read first (xzCheck).
const maxDict = 64 << 20

// xzCheck walks an xz stream's structure before anything is decoded
// (docs/packages.md#bounds): one stream filling data (stream padding
// aside), its index, and every block header's filters, refusing a
// dictionary over maxDict. It returns the uncompressed size the index
// declares, so a bomb is refused before a byte is decoded.
func xzCheck(data []byte) (int64, error) {
	data = trimPadding(data)
	if len(data) < 24 {
		return 0, errors.New("xz stream shorter than its header and footer (truncated)")
	}
	foot := data[len(data)-12:]
	if string(foot[10:]) != "YZ" {
		return 0, errors.New("xz stream without its footer (truncated, or another stream follows)")
	}
	back := (int64(binary.LittleEndian.Uint32(foot[4:])) + 1) * 4
	idxAt := int64(len(data)) - 12 - back
	if idxAt < 12 {
		return 0, errors.New("xz footer's index size points before the first block")
	}
	idx := data[idxAt : len(data)-12]
	if len(idx) < 8 || idx[0] != 0 {
		return 0, errors.New("xz index does not start with its indicator")
	}
	p := 1
	n, ok := uvarint(idx, &p)
	if !ok || n > uint64(len(idx)) {
		return 0, errors.New("xz index's record count is corrupt")
	}
	var total int64
	at := int64(12)
	for i := uint64(0); i < n; i++ {
		unpadded, ok1 := uvarint(idx, &p)
		size, ok2 := uvarint(idx, &p)
		if !ok1 || !ok2 || unpadded > uint64(idxAt) || size > 1<<62 {
			return 0, errors.New("xz index record is corrupt")
		}
		if at >= idxAt {
			return 0, errors.New("xz index lists more blocks than the stream holds")
		}
		if err := xzBlockHeader(data[at:idxAt]); err != nil {
			return 0, fmt.Errorf("xz block %d: %w", i, err)
		}
		total += int64(size)
		at += (int64(unpadded) + 3) &^ 3
		if total < 0 || at > idxAt {
			return 0, errors.New("xz index records overrun the stream")
		}
	}
	if at != idxAt {
		return 0, errors.New("xz blocks and index do not meet")
	}
	return total, nil
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

// trimPadding drops xz stream padding (zero bytes in fours) at the end.
func trimPadding(b []byte) []byte {
	for len(b) >= 4 && bytes.Equal(b[len(b)-4:], []byte{0, 0, 0, 0}) {
		b = b[:len(b)-4]
	}
	return b
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
