package elfread

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// TestBrokenDebugFileNamed: a separate debug file that exists where the
// build-id says but cannot be read is named in the error with why, not
// passed over as if it were missing.
func TestBrokenDebugFileNamed(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("objcopy"); err != nil {
		t.Skipf("skipping: objcopy not found (install binutils): %v", err)
	}
	dir := t.TempDir()
	if err := writeFile(dir, "s.c", "struct s { int a; long b; } s;\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libs.so", "libs.so", "", []string{"s.c"}, "-Wl,--build-id"); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libs.so")
	o, err := Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	id := o.BuildID
	o.Close()
	if len(id) < 3 {
		t.Fatalf("no build-id in %s", lib)
	}
	debugDir := filepath.Join(dir, "debug")
	debug := filepath.Join(debugDir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(debug), 0o755); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(dir, "stripped.so")
	for _, args := range [][]string{{"--only-keep-debug", lib, debug}, {"--strip-debug", lib, stripped}} {
		if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	find := func() (string, error) {
		o, err := Open(stripped)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		dbg, err := FindDebug(o, []string{debugDir})
		if err != nil {
			return "", err
		}
		defer dbg.Close()
		return dbg.Via, nil
	}
	if via, err := find(); err != nil || via != ViaBuildID {
		t.Fatalf("intact debug file: via %q, %v; want %s", via, err, ViaBuildID)
	}
	b, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(debug, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = find()
	if err == nil || !strings.Contains(err.Error(), debug+" (truncated") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("truncated debug file: want one line naming %s as truncated, got %v", debug, err)
	}
	if errors.Is(err, ErrNoDWARF) {
		t.Fatalf("a broken debug file is not the absence of DWARF: %v", err)
	}
	if err := os.Remove(debug); err != nil {
		t.Fatal(err)
	}
	if _, err = find(); !errors.Is(err, ErrNoDWARF) {
		t.Fatalf("no debug file at all: want ErrNoDWARF, got %v", err)
	}
}
