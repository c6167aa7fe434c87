package regfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestKind: each kind of file is named by what it is, a link as a link
// (the mode of an Lstat), a character device apart from a block one.
func TestKind(t *testing.T) {
	dir := t.TempDir()
	fifo, link, file := filepath.Join(dir, "fifo"), filepath.Join(dir, "link"), filepath.Join(dir, "file")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "a FIFO", link: "a symbolic link", file: "a regular file", dir: "a directory", "/dev/null": "a character device"} {
		st, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Kind(st.Mode()); got != want {
			t.Errorf("Kind(%s) = %q, want %q", path, got, want)
		}
	}
}
