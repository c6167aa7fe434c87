package elfread

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// TestDeclFile: a struct declared in a header, and its field, resolve to
// the header's path and lines, through the line table of DWARF 4
// (1-based) and of DWARF 5 (0-based, the unit's file at 0), in a
// relocatable object and in a linked library, and through the header-only
// table of a split unit's .dwo. Cost: about ten gcc runs.
func TestDeclFile(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "inc", "nrt"), 0o755); err != nil {
		t.Fatal(err)
	}
	hdr := "/* a header */\n\nstruct where {\n  int a;\n  long b;\n};\n"
	if err := os.WriteFile(filepath.Join(dir, "inc", "nrt", "w.h"), []byte(hdr), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.c"), []byte("#include <nrt/w.h>\nstruct where w;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "inc", "nrt", "w.h")
	for _, v := range []string{"-gdwarf-4", "-gdwarf-5", "-gdwarf-4 -gsplit-dwarf", "-gdwarf-5 -gsplit-dwarf"} {
		flags := strings.Fields(v)
		for _, linked := range []bool{false, true} {
			name := strings.ReplaceAll(strings.ReplaceAll(v, " ", ""), "-g", "")
			obj := "w" + name + ".o"
			if err := cc.Object(dir, "w.c", obj, append(flags, "-Iinc")...); err != nil {
				t.Fatal(err)
			}
			if linked {
				so := "w" + name + ".so"
				if err := cc.Shared(dir, so, "", "", []string{obj}, flags...); err != nil {
					t.Fatal(err)
				}
				obj = so
			} else if len(flags) > 1 {
				continue // a split object is read through its linked library
			}
			dbg, err := OpenDebug(context.Background(), filepath.Join(dir, obj), Lookup{})
			if err != nil {
				t.Fatal(err)
			}
			found, err := dbg.FindStructs([][]string{{"where"}})
			if err != nil || found[0] == nil {
				t.Fatalf("%s: %v %v", obj, found, err)
			}
			if split := len(flags) > 1; split != (found[0].From == ViaDWO) {
				t.Fatalf("%s: the struct was read via %q", obj, found[0].From)
			}
			st, err := dbg.Types().Struct(found[0].Offset)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dbg.DeclFile(st.Offset, st.DeclFile)
			if err != nil || got != want || st.DeclLine != 3 || st.Fields[1].DeclLine != 5 {
				t.Errorf("%s: decl file %d -> %q (%v), line %d, b at %d; want %s:3, b at 5", obj, st.DeclFile, got, err, st.DeclLine, st.Fields[1].DeclLine, want)
			}
			if _, err := dbg.DeclFile(st.Offset, 9999); err == nil || !strings.Contains(err.Error(), "past the") {
				t.Errorf("%s: index 9999: %v", obj, err)
			}
			dbg.Close()
		}
	}
}

// TestLineFilesHostile: a line table cut short, or one that claims more
// than it holds, is refused by name, never read past.
func TestLineFilesHostile(t *testing.T) {
	d := &Debug{order: binary.LittleEndian}
	for _, c := range []struct {
		name string
		sec  []byte
		off  uint64
		want string
	}{
		{"offset past the section", []byte{1, 2, 3}, 10, "past the 3 bytes"},
		{"length past the section", []byte{0xff, 0, 0, 0, 5, 0}, 0, "claims 255 bytes"},
		{"version 9", []byte{4, 0, 0, 0, 9, 0, 0, 0}, 0, "version 9"},
		{"v5, a million files", v5Header(0x0f, 0x40, 0x42, 0x0f), 0, "entries in a line table header"},
	} {
		_, err := d.lineFileNames(c.sec, c.off, "/cu")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// v5Header is a DWARF 5 line table header with no directories and a
// file count of the LEB128 bytes given.
func v5Header(count ...byte) []byte {
	body := []byte{5, 0, 8, 0}
	hdr := []byte{1, 1, 1, 0xfb, 14, 1} // min_inst, max_ops, is_stmt, line_base, line_range, opcode_base 1
	hdr = append(hdr, 0, 0)             // no directory formats, no directories
	hdr = append(hdr, 1, lnctPath, formString)
	hdr = append(hdr, count...)
	body = append(body, byte(len(hdr)), 0, 0, 0)
	body = append(body, hdr...)
	out := []byte{byte(len(body)), 0, 0, 0}
	return append(out, body...)
}

// FuzzLineFiles: any bytes as a line table, at either offset size and
// any version, end in file names or an error, never a panic.
func FuzzLineFiles(f *testing.F) {
	f.Add(v5Header(1, 'a', 0), uint64(0))
	f.Add([]byte{20, 0, 0, 0, 4, 0, 12, 0, 0, 0, 1, 1, 1, 0xfb, 14, 1, 'd', 0, 0, 'f', 0, 1, 0, 0, 0}, uint64(0))
	f.Fuzz(func(t *testing.T, sec []byte, off uint64) {
		d := &Debug{order: binary.LittleEndian, lineStr: []byte("x\x00dir\x00"), str: []byte("s\x00")}
		files, err := d.lineFileNames(sec, off, "/cu")
		if err == nil && len(files) > maxLineFiles+1 {
			t.Fatalf("%d files", len(files))
		}
	})
}

// TestFileAt: the two numberings of decl_file over one list: DWARF 4's
// 1 is DWARF 5's 0; DWARF 4's 0 is no file; past the list is refused.
func TestFileAt(t *testing.T) {
	files := []string{"/cu/main.c", "/cu/inc/a.h", "/cu/inc/b.h"}
	for _, c := range []struct {
		version int
		index   uint32
		want    string
	}{
		{4, 1, "/cu/main.c"}, {4, 3, "/cu/inc/b.h"}, {4, 0, "no file"}, {4, 4, "past the 3 files"},
		{5, 0, "/cu/main.c"}, {5, 1, "/cu/inc/a.h"}, {5, 2, "/cu/inc/b.h"}, {5, 3, "past the 3 files"},
		{2, 2, "/cu/inc/a.h"}, {5, 1<<32 - 1, "past the 3 files"},
	} {
		got, err := fileAt(c.version, files, c.index)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("DWARF %d, decl_file %d: %q, want %q", c.version, c.index, got, c.want)
		}
	}
}

// TestLineFilesV5: a DWARF 5 header with its entry formats: directories
// by DW_FORM_line_strp, files by string with a directory index and an
// MD5 stepped over; a relative directory joins the compilation
// directory, an absolute file stands alone.
func TestLineFilesV5(t *testing.T) {
	d := &Debug{order: binary.LittleEndian, lineStr: []byte("/cu\x00inc\x00")}
	hdr := []byte{1, 1, 1, 0xfb, 14, 1}          // min_inst, max_ops, is_stmt, line_base, line_range, opcode_base
	hdr = append(hdr, 1, lnctPath, formLineStrp) // directory format
	hdr = append(hdr, 2, 0, 0, 0, 0, 4, 0, 0, 0) // 2 directories: "/cu", "inc"
	hdr = append(hdr, 3, lnctPath, formString, lnctDirectoryIndex, formUdata, 5, formData16)
	hdr = append(hdr, 3)
	md5 := make([]byte, 16)
	for _, f := range []struct {
		name string
		dir  byte
	}{{"main.c", 0}, {"a.h", 1}, {"/abs/b.h", 0}} {
		hdr = append(append(append(hdr, f.name...), 0, f.dir), md5...)
	}
	body := append([]byte{5, 0, 8, 0, byte(len(hdr)), 0, 0, 0}, hdr...)
	sec := append([]byte{byte(len(body)), 0, 0, 0}, body...)
	files, err := d.lineFileNames(sec, 0, "/ignored-when-dir-0-is-absolute")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(files, " "); got != "/cu/main.c /cu/inc/a.h /abs/b.h" {
		t.Errorf("files %q", got)
	}
}
