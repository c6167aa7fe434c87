package elfread

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// manyPagesObject builds a shared object with enough structs that its
// .debug_info runs over many pages, for the tests that truncate it while it
// is read.
func manyPagesObject(t *testing.T) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	// Enough structs that .debug_info runs over many pages.
	dir := t.TempDir()
	var src strings.Builder
	for i := range 400 {
		fmt.Fprintf(&src, "struct s%d { int a; long b; char c[%d]; } v%d;\n", i, i+1, i)
	}
	if err := writeFile(dir, "v.c", src.String()); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libv.so", "libv.so.1", "", []string{"v.c"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "libv.so")
	return path
}

// TestGuardTruncatedWhileReading: a mapped file truncated after Open, while
// its DWARF is being scanned, is an *InputError naming the file under
// Guard, and its Close still works. (The CLI's runner does the same for
// every command: cmd/nrtabi's TestInputTruncatedWhileMapped.)
func TestGuardTruncatedWhileReading(t *testing.T) {
	path := manyPagesObject(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	err = Guard(func() error {
		dbg, err := FindDebug(context.Background(), f, Lookup{})
		if err != nil {
			return err
		}
		_, err = dbg.FindStructs([][]string{{"no_such_struct"}})
		return err
	})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Path != path || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("want an InputError naming %s, got %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGuardPassesOtherPanics: Guard is no catch-all.
func TestGuardPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "other" {
			t.Fatalf("recovered %v", r)
		}
	}()
	Guard(func() error { panic("other") })
}
