package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestExtractAllDWARFNames: extract --all of structs named as the type
// language's built-ins (u32, int, char) and of names holding ESC and
// control bytes gives a fragment the loader accepts and the object checks
// CLEAN against: each such struct is refused by name in an escaped
// not-extracted comment, a member using it an opaque range; DIEs whose
// name attribute is empty (a base type, a typedef, an enum, an
// enumerator, a struct, members) round-trip CLEAN too.
func TestExtractAllDWARFNames(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	names, err := hostile.DWARFNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := hostile.DWARFEmptyNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		obj     hostile.ELFCase
		refused []string
	}{
		{names, []string{"# not extracted: u32 (struct named as the spec type language's built-in u32", "# not extracted: int (", "# not extracted: char (", `# not extracted: esc\x1b[2Jname (`, `# not extracted: ctl\x01\x7fx (`}},
		{empty, nil},
	} {
		t.Run(c.obj.Name, func(t *testing.T) {
			frag := filepath.Join(dir, c.obj.Name, "structs.toml")
			if rc, _, errw := runCLI("extract", "--all", "-o", frag, c.obj.Path); rc != 0 {
				t.Fatalf("extract --all: exit %d %s", rc, errw)
			}
			b, err := os.ReadFile(frag)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			for _, want := range c.refused {
				if !strings.Contains(text, want) {
					t.Errorf("the fragment lacks %q", want)
				}
			}
			if i := strings.IndexAny(text, "\x1b\x01\x7f"); i >= 0 {
				t.Errorf("a raw control byte at %d of the fragment", i)
			}
			rc, out, errw := runCLI("check", "--spec", filepath.Dir(frag), "--role", "none", c.obj.Path)
			if rc != 0 || !strings.Contains(out, "verdict: CLEAN") {
				t.Errorf("check against its own fragment: exit %d\n%s%s\n%s", rc, out, errw, text)
			}
		})
	}
}

// TestExtractAllODRConflicts: two units of one object define struct
// odr_size with different sizes, struct odr_members with different
// members, struct odr_msize with a member of another size and struct
// odr_bits with other bitfields: extract --all refuses each by name (an ODR conflict, both DIEs
// named) instead of taking the first unit's copy, says so on stderr apart
// from the identical copies, keeps odr_same (identical in both), and the
// object checks CLEAN against the fragment.
func TestExtractAllODRConflicts(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	obj, err := hostile.ODRObject(dir)
	if err != nil {
		t.Fatal(err)
	}
	frag := filepath.Join(dir, "frag", "structs.toml")
	rc, _, errw := runCLI("extract", "--all", "-o", frag, obj.Path)
	if rc != 0 {
		t.Fatalf("extract --all: exit %d %s", rc, errw)
	}
	b, err := os.ReadFile(frag)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		"# not extracted: odr_size (struct defined differently by two units (an ODR conflict): the definition at DIE",
		"# not extracted: odr_members (struct defined differently by two units (an ODR conflict)",
		"# not extracted: odr_msize (struct defined differently by two units (an ODR conflict)",
		"# not extracted: odr_bits (struct defined differently by two units (an ODR conflict)",
		`name = "odr_same"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the fragment lacks %q\n%s", want, text)
		}
	}
	for _, bad := range []string{`name = "odr_size"`, `name = "odr_members"`, `name = "odr_msize"`, `name = "odr_bits"`} {
		if strings.Contains(text, bad) {
			t.Errorf("the fragment has a row %s decided by unit order", bad)
		}
	}
	if !strings.Contains(errw, "ODR conflicts") {
		t.Errorf("stderr does not count the ODR conflicts apart: %s", errw)
	}
	if rc, out, errw := runCLI("check", "--spec", filepath.Dir(frag), "--role", "none", obj.Path); rc != 0 || !strings.Contains(out, "verdict: CLEAN") {
		t.Errorf("check against its own fragment: exit %d\n%s%s", rc, out, errw)
	}
}
