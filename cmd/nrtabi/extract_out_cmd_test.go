package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestExtractOutRefusesNonRegular: -o naming a FIFO, a socket, a symbolic
// link (to a file or dangling), a directory or /dev/null is refused in one
// line naming the path and what it is; each is left as it was, and no
// temporary file is left beside it. A regular file replaced keeps its mode;
// a new file gets 0666 less the umask, not the temporary file's 0600.
func TestExtractOutRefusesNonRegular(t *testing.T) {
	obj := typesObject(t, "", "")
	dir := t.TempDir()
	targets, err := hostile.OutTargets(dir)
	if err != nil {
		t.Fatal(err)
	}
	kind := func(p string) (fs.FileMode, uint64) {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode(), st.Sys().(*syscall.Stat_t).Rdev
	}
	before, _ := os.ReadDir(dir)
	for _, tg := range targets {
		mode, rdev := kind(tg.Path)
		rc, out, errw := runCLI("extract", "--struct", "nec_version_info_t", "-o", tg.Path, obj)
		if rc != 1 || strings.Count(errw, "\n") != 1 || !strings.Contains(errw, "-o "+tg.Path+": is "+tg.Name) || out != "" {
			t.Errorf("-o %s (%s): exit %d, stderr %q; want exit 1 and one line naming it", tg.Path, tg.Name, rc, errw)
		}
		if m, r := kind(tg.Path); m != mode || r != rdev {
			t.Errorf("-o %s: was %v (rdev %#x), is now %v (rdev %#x)", tg.Path, mode, rdev, m, r)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out-real.toml")); err != nil || string(b) != "# kept\n" {
		t.Errorf("the file behind the symbolic link was written through: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere.toml")); err == nil {
		t.Error("the dangling symbolic link's target was created")
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("%d entries before, %d after: a temporary file was left", len(before), len(after))
	}

	kept := filepath.Join(dir, "kept.toml")
	if err := os.WriteFile(kept, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o640); err != nil {
		t.Fatal(err)
	}
	if rc, _, errw := runCLI("extract", "--struct", "nec_version_info_t", "-o", kept, obj); rc != 0 {
		t.Fatalf("-o a regular file: exit %d %s", rc, errw)
	}
	if m, _ := kind(kept); m != 0o640 {
		t.Errorf("the file replaced had mode 0640, now %v", m)
	}
	if b, _ := os.ReadFile(kept); !strings.Contains(string(b), "nec_version_info_t") {
		t.Errorf("the file was not replaced: %q", b)
	}
	mask := syscall.Umask(0o022)
	defer syscall.Umask(mask)
	fresh := filepath.Join(dir, "fresh.toml")
	if rc, _, errw := runCLI("extract", "--struct", "nec_version_info_t", "-o", fresh, obj); rc != 0 {
		t.Fatalf("-o a new file: exit %d %s", rc, errw)
	}
	if m, _ := kind(fresh); m != 0o644 {
		t.Errorf("a new file under umask 022 has mode %v, want 0644", m)
	}
}
