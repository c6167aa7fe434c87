package elfread

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// onlyReaderAt hides bytes.Reader's Size method: NewFile then reads up to
// the end.
type onlyReaderAt struct{ r io.ReaderAt }

func (o onlyReaderAt) ReadAt(p []byte, off int64) (int, error) { return o.r.ReadAt(p, off) }

// TestNewFileMatchesOpen: a File read through an io.ReaderAt (with and
// without a Size method) has the identity and the structs Open's has; its
// errors name no file; Close is safe twice.
func TestNewFileMatchesOpen(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := writeFile(dir, "n.c", "struct pair { int a; long b; } pair;\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libn.so", "libn.so.1", "", []string{"n.c"}, "-Wl,--build-id"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "libn.so")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	for name, r := range map[string]io.ReaderAt{"bytes.Reader": bytes.NewReader(data), "no Size": onlyReaderAt{bytes.NewReader(data)}} {
		f, err := NewFile(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Path != "" || f.BuildID != want.BuildID || f.BuildID == "" || f.SONAME != "libn.so.1" || !slices.Equal(f.Needed, want.Needed) {
			t.Fatalf("%s: %q %q %q %v, Open gives %q %q %v", name, f.Path, f.BuildID, f.SONAME, f.Needed, want.BuildID, want.SONAME, want.Needed)
		}
		dbg, err := FindDebug(f, Lookup{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found, err := dbg.FindStructs([][]string{{"pair"}})
		if err != nil || found[0] == nil {
			t.Fatalf("%s: struct pair: %v %v", name, found, err)
		}
		l, err := dbg.Types().Struct(found[0].Offset)
		if err != nil || l.Size != 16 || len(l.Fields) != 2 {
			t.Fatalf("%s: layout %+v %v", name, l, err)
		}
		if err := dbg.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil || f.Close() != nil {
			t.Fatalf("%s: Close: %v", name, err)
		}
	}
	_, err = NewFile(bytes.NewReader(append([]byte("\x7fELF"), make([]byte, 60)...)))
	if err == nil || strings.HasPrefix(err.Error(), ":") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a corrupted ELF header: want one line naming no file, got %v", err)
	}
	if _, err := NewFile(bytes.NewReader([]byte("\x7fELF"))); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Fatalf("4 bytes: %v", err)
	}
}
