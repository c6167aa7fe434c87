package elfread

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestBrokenDebugFileNamed: a separate debug file that exists where the
// build-id says but cannot be read is named in the error with why, not
// passed over as if it were missing.
func TestBrokenDebugFileNamed(t *testing.T) {
	stripped, debugDir, debug := splitObject(t)
	find := func() (string, error) {
		o, err := Open(stripped)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		dbg, err := FindDebug(context.Background(), o, Lookup{Dirs: []string{debugDir}})
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
