package elfread

import (
	"context"
	"errors"
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
