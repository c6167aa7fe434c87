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
// the definition another unit holds through AllTypes at -j 1 and 2; two
// definitions of differing sizes leave the declaration as it is, and
// Unresolved says why (planted: the second definition). At leaves a
// declaration reached only behind a pointer as it is, without the whole
// input's index (TestDeclaredByValueResolves has the one At resolves).
func TestDeclaredResolvesToDefinition(t *testing.T) {
	base := map[string]string{
		"b.c": "struct init;\nstruct holder { struct init *p; };\nstruct holder h;\n",
		"a.c": "struct init { int a; long b[2]; };\nstruct init ia;\n",
	}
	d := declLib(t, base)
	before := scanAllRuns.Load()
	if _, e := holderElem(t, d, 0); !e.Declaration || e.Name != "init" {
		t.Errorf("At: holder.p points to %+v, want the declaration of init", e)
	}
	if n := scanAllRuns.Load() - before; n != 0 {
		t.Errorf("At of a struct reaching a declaration only behind a pointer ran ScanAll %d times, want 0", n)
	}
	d.Close()
	for _, jobs := range []int{1, 2} {
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
	for _, jobs := range []int{2} {
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

// TestDeclaredByValueResolves: At resolves a declaration whose layout
// the struct needs (g++ writes a class with a key function only in the
// unit defining it), a member and a base by value, through one ScanAll:
// holder and derived have the definition's 32 bytes, not a 0-byte
// declaration's. Cost: two compiles of a few lines.
func TestDeclaredByValueResolves(t *testing.T) {
	k := "struct K { virtual int f(); int a; long b[2]; };\n"
	d := declLib(t, map[string]string{
		"a.cc": k + "int K::f() { return a; }\n",
		"b.cc": k + "struct holder { K k; K *p; };\nholder h;\nstruct derived : K { int c; };\nderived dv;\n",
	})
	defer d.Close()
	found, err := d.FindStructs([][]string{{"holder"}, {"derived"}})
	if err != nil || found[0] == nil || found[1] == nil {
		t.Fatalf("holder, derived: %v %v", found, err)
	}
	before := scanAllRuns.Load()
	g := d.Types()
	for _, f := range found {
		s, err := g.Struct(f.Offset)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Fields) == 0 {
			t.Fatalf("%s: no members", f.Name)
		}
		m := typemodel.Strip(s.Fields[0].Type)
		if m == nil || m.Declaration || typemodel.SizeOf(m) != 32 || len(m.Fields) < 2 {
			t.Errorf("%s: its first member (%s) is %+v, want K's 32-byte definition", f.Name, s.Fields[0].Name, m)
		}
	}
	if n := scanAllRuns.Load() - before; n != 1 {
		t.Errorf("%d ScanAll runs for two structs holding a declaration by value, want 1", n)
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
