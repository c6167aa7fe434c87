package elfread

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestCursorSticksAtFirstError: a length past the end fails once, names
// the section and offset, and every later read gives zero without moving.
func TestCursorSticksAtFirstError(t *testing.T) {
	b := []byte{0x05, 'a', 'b', 0, 0xf3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x07}
	c := newCursor(".debug_info", b, 0, binary.LittleEndian)
	if v := c.Uleb(); v != 5 {
		t.Fatalf("uleb %d", v)
	}
	if s := c.CString(); string(s) != "ab" {
		t.Fatalf("cstring %q", s)
	}
	n := c.Uleb() // 2^64 - 13: once a step backwards
	c.Skip(n)
	var fe *formatError
	if !errors.As(c.Err(), &fe) || fe.Section != ".debug_info" || fe.Offset != 14 || !strings.Contains(fe.Msg, "runs past the end") {
		t.Fatalf("err %v", c.Err())
	}
	if c.U8() != 0 || c.Uint(4) != 0 || c.Uleb() != 0 || c.Left() != 0 {
		t.Fatal("reads after the failure must give zero at the end")
	}
	if c.Err() != error(fe) {
		t.Fatal("the first error must stick")
	}
	// An overlong LEB128 and a string without its NUL.
	for _, bad := range [][]byte{bytes.Repeat([]byte{0x80}, 11), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}} {
		c := newCursor("s", bad, 0, binary.LittleEndian)
		c.Uleb()
		if c.Err() == nil {
			t.Fatalf("% x: no error", bad)
		}
	}
	c = newCursor("s", []byte("abc"), 0, binary.LittleEndian)
	if c.CString(); c.Err() == nil {
		t.Fatal("an unterminated string must fail")
	}
}

// TestInflateBounded: the declared size is the most that is inflated, a
// stream longer or shorter than declared is refused, and a declared size
// over the cap is refused before anything is allocated.
func TestInflateBounded(t *testing.T) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(make([]byte, 1<<20))
	w.Close()
	zr := func() *bytes.Reader { return bytes.NewReader(z.Bytes()) }
	r, _ := zlib.NewReader(zr())
	if _, err := inflate(".debug_info", r, 100, 1<<30); err == nil || !strings.Contains(err.Error(), "more than its declared 100") {
		t.Fatalf("longer than declared: %v", err)
	}
	r, _ = zlib.NewReader(zr())
	if _, err := inflate(".debug_info", r, 2<<20, 1<<30); err == nil || !strings.Contains(err.Error(), "less than its declared") {
		t.Fatalf("shorter than declared: %v", err)
	}
	r, _ = zlib.NewReader(zr())
	if _, err := inflate(".debug_info", r, 1<<40, inflateCap(4096)); err == nil || !strings.Contains(err.Error(), "decompression bomb") {
		t.Fatalf("over the cap: %v", err)
	}
	r, _ = zlib.NewReader(zr())
	if b, err := inflate(".debug_info", r, 1<<20, 1<<30); err != nil || len(b) != 1<<20 {
		t.Fatalf("exact: %d %v", len(b), err)
	}
}
