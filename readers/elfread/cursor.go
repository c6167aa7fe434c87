package elfread

// The reader's byte cursor: its first error sticks (naming the section and
// offset), and every length is checked against what is left, so nothing
// here panics on any input.

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// formatError is corrupted input at a known place.
type formatError struct {
	Section string // ".debug_info", ".debug_abbrev", ...
	Offset  int    // byte offset in the section
	Msg     string
}

func (e *formatError) Error() string {
	return fmt.Sprintf("%s+%#x: %s", e.Section, e.Offset, e.Msg)
}

// cursor reads one section front to back. After the first failure every
// read returns zero and the cursor sits at the end, so loops over it stop;
// Err reports that first failure.
type cursor struct {
	section string
	b       []byte
	off     int
	order   binary.ByteOrder
	err     error
}

// newCursor reads b, the bytes of section, from off.
func newCursor(section string, b []byte, off int, order binary.ByteOrder) cursor {
	c := cursor{section: section, b: b, order: order}
	c.Seek(off)
	return c
}

// Err is the first failure, or nil.
func (c *cursor) Err() error { return c.err }

// Off is the current offset in the section.
func (c *cursor) Off() int { return c.off }

// Left is how many bytes remain.
func (c *cursor) Left() int { return len(c.b) - c.off }

// Bytes is the whole section the cursor reads.
func (c *cursor) Bytes() []byte { return c.b }

// Seek moves to off; an offset outside the section is a failure.
func (c *cursor) Seek(off int) {
	if off < 0 || off > len(c.b) {
		c.Fail("offset %#x is outside the section's %d bytes", off, len(c.b))
		return
	}
	if c.err == nil {
		c.off = off
	}
}

// Limit shortens the section to end (a unit's end), keeping the offset.
func (c *cursor) Limit(end int) {
	if end < c.off || end > len(c.b) {
		c.Fail("end %#x is outside the section's %d bytes", end, len(c.b))
		return
	}
	c.b = c.b[:end]
}

// Fail records a failure at the current offset (only the first sticks).
func (c *cursor) Fail(format string, args ...any) {
	if c.err == nil {
		c.err = &formatError{Section: c.section, Offset: c.off, Msg: fmt.Sprintf(format, args...)}
	}
	c.off = len(c.b)
}

func (c *cursor) need(n int) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || n > len(c.b)-c.off {
		c.Fail("needs %d bytes, %d left", n, len(c.b)-c.off)
		return false
	}
	return true
}

// U8 reads one byte.
func (c *cursor) U8() uint8 {
	if !c.need(1) {
		return 0
	}
	v := c.b[c.off]
	c.off++
	return v
}

// Uint reads an unsigned value of n bytes (1, 2, 3, 4 or 8) in the
// section's byte order.
func (c *cursor) Uint(n int) uint64 {
	if !c.need(n) {
		return 0
	}
	p := c.b[c.off:]
	c.off += n
	switch n {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(c.order.Uint16(p))
	case 3:
		if c.order == binary.BigEndian {
			return uint64(p[0])<<16 | uint64(p[1])<<8 | uint64(p[2])
		}
		return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16
	case 4:
		return uint64(c.order.Uint32(p))
	case 8:
		return c.order.Uint64(p)
	}
	c.off -= n
	c.Fail("no %d-byte integers", n)
	return 0
}

// Uleb reads an unsigned LEB128 value; one longer than 10 bytes or past 64
// bits is a failure.
func (c *cursor) Uleb() uint64 {
	var v uint64
	var shift uint
	for {
		if c.err != nil {
			return 0
		}
		if c.off >= len(c.b) {
			c.Fail("LEB128 value runs past the end")
			return 0
		}
		b := c.b[c.off]
		c.off++
		if shift == 63 && b > 1 || shift > 63 {
			c.Fail("LEB128 value does not fit in 64 bits")
			return 0
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
		shift += 7
	}
}

// SkipLeb steps over a LEB128 value of either sign.
func (c *cursor) SkipLeb() {
	for i := 0; ; i++ {
		if c.err != nil {
			return
		}
		if c.off >= len(c.b) || i >= 10 {
			c.Fail("LEB128 value runs past the end or past 10 bytes")
			return
		}
		b := c.b[c.off]
		c.off++
		if b < 0x80 {
			return
		}
	}
}

// Skip steps over n bytes, checked against what is left (n may come from
// the input, so it is unsigned and never moves the cursor backwards).
func (c *cursor) Skip(n uint64) {
	if c.err != nil {
		return
	}
	if n > uint64(len(c.b)-c.off) {
		c.Fail("a length of %d bytes runs past the end (%d left)", n, len(c.b)-c.off)
		return
	}
	c.off += int(n)
}

// CString reads a NUL-terminated string (without the NUL, not copied).
func (c *cursor) CString() []byte {
	if c.err != nil {
		return nil
	}
	i := bytes.IndexByte(c.b[c.off:], 0)
	if i < 0 {
		c.Fail("string runs past the end")
		return nil
	}
	s := c.b[c.off : c.off+i]
	c.off += i + 1
	return s
}

// cStringAt reads the NUL-terminated string at off of a string table,
// without moving any cursor; ok is false outside the table.
func cStringAt(tab []byte, off uint64) (s []byte, ok bool) {
	if off >= uint64(len(tab)) {
		return nil, false
	}
	s = tab[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		return s[:i], true
	}
	return s, true
}
