package elfread

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingPartError: a type the missing supplement holds is a
// MissingPartError naming the supplement and the fix, one line, from
// AllTypes and from the lazy lookup of one struct alike.
func TestMissingPartError(t *testing.T) {
	dir, _ := dwzInstalledPair(t)
	d, err := OpenDebug(context.Background(), filepath.Join(dir, "liba.so"), Lookup{Dirs: []string{t.TempDir()}, AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	found, err := d.FindStructs([][]string{{"only_a"}})
	if err != nil || found[0] == nil {
		t.Fatalf("only_a: %v %v", found, err)
	}
	_, lazy := d.Types().Struct(found[0].Offset)
	_, all := d.AllTypes(context.Background(), 2)
	for what, err := range map[string]error{"Struct": lazy, "AllTypes": all} {
		var mp *MissingPartError
		var ie *InputError
		if !errors.As(err, &mp) || !errors.As(err, &ie) {
			t.Errorf("%s: %v, want an InputError holding a MissingPartError", what, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "corrupted") || !strings.Contains(msg, "nrtabi-realworld-test.debug") || !strings.Contains(msg, "--debug-dir") || strings.ContainsAny(msg, "\n\r") {
			t.Errorf("%s: %q", what, msg)
		}
		t.Logf("%s: %v", what, err)
	}
}

// TestSupplementUnderBuildIDRoot: a debug file opened where a build-id
// tree holds it (ROOT/.build-id/xx/yyyy.debug) finds the supplement its
// installed path names under ROOT, with no --debug-dir.
func TestSupplementUnderBuildIDRoot(t *testing.T) {
	dir, root := dwzInstalledPair(t)
	data, err := os.ReadFile(filepath.Join(dir, "liba.so"))
	if err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(root, ".build-id", "ab", "cdef.debug")
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at, data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDebug(context.Background(), at, Lookup{})
	if err != nil {
		t.Fatalf("the supplement under %s is not found from %s: %v", root, at, err)
	}
	defer d.Close()
	if len(d.Parts()) < 2 {
		t.Fatalf("parts %v", d.Parts())
	}
}
