package elfread

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/typemodel"
)

// FuzzReader feeds mutated real objects (the seeds are the checker's
// FuzzReadObject corpus: gcc -g objects in DWARF 4 and 5, a compressed one,
// a shared object) to every reading step on its own: open, the dynamic
// table, the debug-file search, the struct and enum scans and the layout and type
// reader, and the whole-library scan. NewFile, ReadDynTable, FindDebug, FindStructs, FindEnums and ScanAll end with a result
// or a one-line *InputError; a layout error is any one-line error; a panic
// fails the run.
func FuzzReader(f *testing.F) {
	noDebug := []string{filepath.Join(f.TempDir(), "no-debug-dir")}
	f.Fuzz(func(t *testing.T, data []byte) {
		oneLine := func(what string, err error, mustInput bool) bool {
			t.Helper()
			if err == nil {
				return true
			}
			var ie *InputError
			if strings.Contains(err.Error(), "\n") || (mustInput && !errors.As(err, &ie)) {
				t.Fatalf("%s: want nil or a one-line error (*InputError: %v), got %T %q", what, mustInput, err, err)
			}
			return false
		}
		o, err := NewFile(bytes.NewReader(data))
		if !oneLine("open", err, true) {
			return
		}
		defer o.Close()
		if o.File.Section(".dynsym") != nil {
			_, err := ReadDynTable(o)
			oneLine("dynamic table", err, true)
		}
		dbg, err := FindDebug(o, Lookup{Dirs: noDebug})
		if !oneLine("find debug", err, true) {
			return
		}
		defer dbg.Close()
		found, err := dbg.FindStructs([][]string{{hostile.StructName}, {"outer"}, {"inner"}})
		if !oneLine("find structs", err, true) {
			return
		}
		enums, err := dbg.FindEnums([][]string{{"colour_t", "colour"}, {"wide"}, {hostile.StructName}})
		if !oneLine("find enums", err, true) {
			return
		}
		// The whole-library scan (extract --all) on two workers, and the
		// types of what it lists.
		idx, err := dbg.ScanAll(context.Background(), 2)
		g := dbg.Types()
		if oneLine("scan all", err, true) {
			for _, n := range idx.Types[:min(len(idx.Types), 8)] {
				if n.Kind == "enum" {
					_, err = g.Enum(n.Offset)
				} else {
					_, err = g.Struct(n.Offset)
				}
				oneLine("type of "+n.Name, err, false)
			}
		}
		for _, fd := range enums {
			if fd != nil {
				_, err := g.Enum(fd.Offset)
				oneLine("enum type", err, false)
			}
		}
		for _, fd := range found {
			if fd == nil {
				continue
			}
			l, err := g.Struct(fd.Offset)
			if !oneLine("layout", err, false) {
				continue
			}
			for _, m := range l.Fields {
				if s := typemodel.Decl(m.Type, m.Name); len(s) > 1<<16 {
					t.Fatalf("member %s spelled in %d bytes", m.Name, len(s))
				}
			}
		}
	})
}
