package elfread

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/typemodel"
)

// declLib builds a shared library of C units and opens its DWARF.
func declLib(t *testing.T, units map[string]string) *Debug {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	var names []string
	for name, body := range units {
		if err := writeFile(dir, name, body); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := cc.Shared(dir, "libdecl.so", "", "", names, "-g", "-O0"); err != nil {
		t.Fatal(err)
	}
	return openDebugT(t, filepath.Join(dir, "libdecl.so"))
}

// holderElem is the pointee of struct holder's member p, through At or
// AllTypes on jobs workers (0: At).
func holderElem(t *testing.T, d *Debug, jobs int) (*Types, *typemodel.Type) {
	t.Helper()
	g := d.Types()
	if jobs > 0 {
		var err error
		if g, err = d.AllTypes(context.Background(), jobs); err != nil {
			t.Fatal(err)
		}
	}
	found, err := d.FindStructs([][]string{{"holder"}})
	if err != nil || found[0] == nil {
		t.Fatalf("holder: %v %v", found, err)
	}
	h, err := g.Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Fields) != 1 || h.Fields[0].Type.Kind != typemodel.Pointer {
		t.Fatalf("holder: %+v", h.Fields)
	}
	return g, h.Fields[0].Type.Elem
}

// TestDeclaredResolvesToDefinition: a struct the unit only declares is
// the definition another unit holds, the same through At and AllTypes
// at -j 1 and 2; two definitions of differing sizes leave the declaration
// as it is, and Unresolved says why (planted: the second definition).
func TestDeclaredResolvesToDefinition(t *testing.T) {
	base := map[string]string{
		"b.c": "struct init;\nstruct holder { struct init *p; };\nstruct holder h;\n",
		"a.c": "struct init { int a; long b[2]; };\nstruct init ia;\n",
	}
	for _, jobs := range []int{0, 1, 2} {
		d := declLib(t, base)
		g, e := holderElem(t, d, jobs)
		if e.Declaration || typemodel.SizeOf(e) != 24 || len(e.Fields) != 2 {
			t.Errorf("-j %d: holder.p points to %+v, want the 24-byte definition", jobs, e)
		}
		if why := g.Unresolved(e); why != "" {
			t.Errorf("-j %d: %s", jobs, why)
		}
		d.Close()
	}
	clash := map[string]string{"c.c": "struct init { char c; };\nstruct init ic;\n"}
	for k, v := range base {
		clash[k] = v
	}
	for _, jobs := range []int{0, 2} {
		d := declLib(t, clash)
		g, e := holderElem(t, d, jobs)
		if !e.Declaration || e.HasSize {
			t.Errorf("-j %d: holder.p points to %+v, want the declaration (two differing definitions)", jobs, e)
		}
		if why := g.Unresolved(e); !strings.Contains(why, "differing sizes") {
			t.Errorf("-j %d: Unresolved: %q", jobs, why)
		}
		d.Close()
	}
}

// TestDeclaredReusesTheIndex: AllTypes after ScanAll (extract --all)
// resolves a declaration through the index ScanAll made, without a second
// scan of every unit; alone, it scans once.
func TestDeclaredReusesTheIndex(t *testing.T) {
	units := map[string]string{
		"b.c": "struct init;\nstruct holder { struct init *p; };\nstruct holder h;\n",
		"a.c": "struct init { int a; long b[2]; };\nstruct init ia;\n",
	}
	for _, scanFirst := range []bool{true, false} {
		d := declLib(t, units)
		before := scanAllRuns.Load()
		if scanFirst {
			if _, err := d.ScanAll(context.Background(), 2); err != nil {
				t.Fatal(err)
			}
		}
		_, e := holderElem(t, d, 2)
		if e.Declaration || typemodel.SizeOf(e) != 24 {
			t.Errorf("holder.p points to %+v, want the 24-byte definition", e)
		}
		if n := scanAllRuns.Load() - before; n != 1 {
			t.Errorf("ScanAll first %v: %d scans, want 1", scanFirst, n)
		}
		d.Close()
	}
}
