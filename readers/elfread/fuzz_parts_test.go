package elfread

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSupLink: .gnu_debugaltlink and .debug_sup from any bytes give a link
// or an error, never a panic; a link always has a path and a bounded id.
func FuzzSupLink(f *testing.F) {
	f.Add([]byte("/usr/lib/debug/.dwz/x86_64-linux-gnu/libfoo.debug\x00\x4d\xb6\xfa\x5f\xa4\xf2\xf4\x67\xce\x13\x11\xa6\xe5\x73\x8f\xab\xf0\x16\x17\x28"))
	f.Add([]byte("../../.dwz/pkg\x00\x01"))
	f.Add([]byte("\x05\x00\x00common.debug\x00\x14\x4d\xb6\xfa\x5f\xa4\xf2\xf4\x67\xce\x13\x11\xa6\xe5\x73\x8f\xab\xf0\x16\x17\x28"))
	f.Add([]byte("\x05\x00\x01\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if l, err := parseAltLink(b); err == nil && (l.Path == "" || len(l.BuildID) == 0 || len(l.BuildID) > 2*maxSupID) {
			t.Fatalf("altlink %+v", l)
		}
		if l, isSup, err := parseDebugSup(b, binary.LittleEndian); err == nil && (!isSup && l.Path == "" || len(l.BuildID) == 0 || len(l.BuildID) > 2*maxSupID) {
			t.Fatalf("debug_sup %+v", l)
		} else if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("two-line error %q", err)
		}
	})
}

// cuIndexSeed is a one-unit .debug_cu_index of the given version with
// info, abbrev and str_offsets columns.
func cuIndexSeed(version uint32) []byte {
	le := binary.LittleEndian
	var b []byte
	u32 := func(v uint32) { b = le.AppendUint32(b, v) }
	u32(version)
	u32(3) // columns
	u32(1) // units
	u32(2) // slots
	b = le.AppendUint64(b, 0x99eae742302a36b2)
	b = le.AppendUint64(b, 0)
	u32(1) // slot 0 -> row 1
	u32(0)
	u32(sectInfo)
	u32(sectAbbrev)
	u32(sectStrOffsets)
	u32(0) // offsets
	u32(0)
	u32(0)
	u32(0x2793) // sizes
	u32(0x2f8)
	u32(0xa98)
	return b
}

// FuzzCUIndex: any .debug_cu_index gives contributions or an error; the
// parser never reads outside the section or allocates beyond its size.
func FuzzCUIndex(f *testing.F) {
	f.Add(cuIndexSeed(2))
	f.Add(cuIndexSeed(5))
	f.Add([]byte{2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseCUIndex(b, binary.LittleEndian)
		if err == nil && len(m) > len(b)/12 {
			t.Fatalf("%d units from %d bytes", len(m), len(b))
		}
	})
}

// FuzzRewriteSplitForms: the abbreviation rewrite keeps the section's
// length and changes nothing but form codes.
func FuzzRewriteSplitForms(f *testing.F) {
	// code 1, DW_TAG_compile_unit, children; name GNU_str_index, low_pc
	// GNU_addr_index, producer strx1; end; code 2 typedef, name addrx.
	f.Add([]byte{1, 0x11, 1, 0x03, 0x82, 0x3e, 0x11, 0x81, 0x3e, 0x25, 0x25, 0, 0, 2, 0x16, 0, 0x03, 0x1b, 0, 0, 0})
	f.Add([]byte{1, 0x13, 0, 0x0b, 0x21, 0x7f, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := rewriteSplitForms(b)
		if len(out) != len(b) {
			t.Fatalf("length %d from %d (err %v)", len(out), len(b), err)
		}
	})
}

// FuzzSupplement: a dwz'd library (built by gcc -g and dwz -m from two
// files sharing struct outer and struct inner) read with any bytes as its
// supplementary file: the struct scan and the merged type reader end with a
// result or a one-line error, never a panic. The seed is the real
// supplement.
func FuzzSupplement(f *testing.F) {
	shared := "struct inner { int a; char b[6]; };\nstruct outer { long l; struct inner in; struct inner *p; };\n"
	built := buildDwzPair(f, shared+"struct outer oa;\nint fa(void) { return 0; }\n", shared+"struct outer ob;\nint fb(void) { return 0; }\n")
	sup, err := os.ReadFile(filepath.Join(built, "common.debug"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sup)
	lib := filepath.Join(built, "liba.so")
	f.Fuzz(func(t *testing.T, b []byte) {
		main, err := Open(lib)
		if err != nil {
			t.Fatal(err)
		}
		defer main.Close()
		d, err := loadDebug(main, main, ViaEmbedded)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		c, err := NewFile(bytes.NewReader(b))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("two-line error %q", err)
			}
			return
		}
		part, why := usePart(main, c, func(*File) bool { return true }, ViaSupplement, "", "")
		if part == nil {
			if strings.Contains(why, "\n") {
				t.Fatalf("two-line refusal %q", why)
			}
			return
		}
		d.alt = part
		if err := d.addPart(part); err != nil {
			part.Close()
			return
		}
		found, err := d.FindStructs([][]string{{"outer"}, {"inner"}})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("two-line error %q", err)
			}
			return
		}
		g := d.Types()
		for _, fd := range found {
			if fd == nil {
				continue
			}
			if _, err := g.Struct(fd.Offset); err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("two-line error %q", err)
			}
		}
	})
}
