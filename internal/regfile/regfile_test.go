package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
)

// TestRefusesWhatIsNotRegular: a FIFO, a directory and a device are refused
// by what they are, without blocking, by every entry point.
func TestRefusesWhatIsNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "is a FIFO, not", dir: "is a directory, not", "/dev/null": "is a device, not"} {
		_, _, err := Open(path)
		var nr *NotRegularError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), path+" "+want) {
			t.Errorf("Open %s: %v", path, err)
		}
		if _, err := ReadFile(path, 10); !errors.As(err, &nr) {
			t.Errorf("ReadFile %s: %v", path, err)
		}
		if _, err := ReadFS(os.DirFS("/"), strings.TrimPrefix(path, "/"), 10); !errors.As(err, &nr) || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFS %s: %v", path, err)
		}
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, st, err := Open(file)
	if err != nil || st.Size() != 1 {
		t.Fatal(err)
	}
	f.Close()
}

// TestBound: a file of exactly the bound is read, one byte more is refused
// naming the file and the bound.
func TestBound(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(file, 5); err != nil || string(b) != "12345" {
		t.Fatalf("at the bound: %q %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(file, 4); !errors.As(err, &tl) || err.Error() != file+": 5 bytes, over the 4-byte bound for it" {
		t.Fatalf("over the bound: %v", err)
	}
	fsys := fstest.MapFS{"a.toml": {Data: []byte("12345")}}
	if b, err := ReadFS(fsys, "a.toml", 5); err != nil || string(b) != "12345" {
		t.Fatalf("ReadFS at the bound: %q %v", b, err)
	}
	if _, err := ReadFS(fsys, "a.toml", 4); !errors.As(err, &tl) || !strings.Contains(err.Error(), "a.toml: 5 bytes, over the 4-byte bound") {
		t.Fatalf("ReadFS over the bound: %v", err)
	}
	// A file that grows between the stat and the read.
	if _, err := readAtMost(strings.NewReader("123456"), "grew", 3, 4); !errors.As(err, &tl) || err.Error() != "grew: more than 4 bytes, the bound for it" {
		t.Fatalf("grown: %v", err)
	}
}
