package gen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFindRoot: the walk stops at this module's go.mod, passes another
// module's (and one that only mentions this module's path in a comment),
// names a go.mod that is not a regular file instead of waiting on it, and
// says "not a checkout" by type outside one.
func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	write := func(dir, text string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root, "// a checkout\nmodule \""+Module+"\"\n\ngo 1.24\n")
	inner := filepath.Join(root, "runtime", "deep")
	write(inner, "module example.com/other // not "+Module+"\n")
	write(filepath.Join(inner, "x"), "// module "+Module+"\n")
	if got, err := FindRoot(filepath.Join(inner, "x")); err != nil || got != root {
		t.Errorf("FindRoot under other modules = %q %v, want %s", got, err, root)
	}
	out := t.TempDir()
	var nc *NotCheckoutError
	if _, err := FindRoot(out); !errors.As(err, &nc) {
		t.Errorf("outside a checkout: %v, want a NotCheckoutError", err)
	}
	fifo := filepath.Join(out, "fifo")
	if err := os.Mkdir(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, "go.mod"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindRoot(fifo); err == nil || !strings.Contains(err.Error(), "go.mod") || errors.As(err, &nc) {
		t.Errorf("FIFO go.mod: %v, want an error naming it", err)
	}
}
