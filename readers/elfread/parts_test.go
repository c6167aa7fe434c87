package elfread

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/typemodel"
)

// TestSupplementMixedReferences: dwz -m moves what both libraries share
// (base types, member names) into the supplement, while the structs stay in
// liba and refer into it with DW_FORM_GNU_ref_alt and DW_FORM_GNU_strp_alt.
// Their layouts, member names and member types (nested too) read right.
func TestSupplementMixedReferences(t *testing.T) {
	shared := "struct shared { int x; long y; char tag[12]; };\n"
	// anon_t (liba) and other_t (libb) name the same anonymous struct
	// (dwz 0.15 keeps it in liba: the typedef path into a supplement is
	// exercised only when dwz moves it).
	dir := buildDwzPair(t,
		shared+"struct only_a { char c; struct shared s; int z; } oa;\nstruct shared sa;\ntypedef struct { int q; long r; double d[3]; } anon_t;\nanon_t an;\nint fa(void) { return 0; }\n",
		shared+"struct shared sb;\ntypedef struct { int q; long r; double d[3]; } other_t;\nother_t ot;\nint fb(void) { return 0; }\n")
	common := filepath.Join(dir, "common.debug")
	o, err := Open(filepath.Join(dir, "liba.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	dbg, err := FindDebug(o, Lookup{})
	if err != nil {
		t.Fatal(err)
	}
	defer dbg.Close()
	found, err := dbg.FindStructs([][]string{{"only_a"}, {"shared"}, {"anon_t"}})
	if err != nil {
		t.Fatal(err)
	}
	if found[0] == nil || found[1] == nil || found[2] == nil {
		t.Fatalf("found %v", found)
	}
	if found[2].Via != "typedef anon_t" {
		t.Fatalf("anon_t: %+v; want the struct through liba's typedef", found[2])
	}
	g := dbg.Types()
	if la, err := g.Struct(found[2].Offset); err != nil || la.Size != 40 || len(la.Fields) != 3 || la.Fields[2].Offset != 16 {
		t.Fatalf("anon_t: %+v %v", la, err)
	}
	if p := dbg.Parts(); len(p) != 2 || p[1].Path != common || p[1].Via != ViaSupplement {
		t.Fatalf("parts %+v", p)
	}
	l, err := g.Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range l.Fields {
		got = append(got, m.Name+":"+typemodel.Spell(m.Type)+"@"+itoa(m.Offset)+"/"+itoa(m.Size()))
	}
	want := "c:char@0/1 s:struct shared@8/32 z:int@40/4"
	if strings.Join(got, " ") != want || l.Size != 48 {
		t.Fatalf("only_a: %d bytes, members %s; want 48 bytes, %s", l.Size, strings.Join(got, " "), want)
	}
	// The shared struct itself, read in the supplement through the same
	// graph, has its own members.
	ls, err := g.Struct(found[1].Offset)
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, m := range ls.Fields {
		got = append(got, m.Name+":"+typemodel.Spell(m.Type)+"@"+itoa(m.Offset)+"/"+itoa(m.Size()))
	}
	if want := "x:int@0/4 y:long int@8/8 tag:char [12]@16/12"; strings.Join(got, " ") != want || ls.Name != "shared" {
		t.Fatalf("%q: members %s; want shared, %s", ls.Name, strings.Join(got, " "), want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// buildDwzPair compiles liba.so and libb.so from the two sources with gcc -g
// and moves what they share into common.debug with dwz -m, in a temporary
// directory it returns; it skips, saying why, without gcc or dwz.
func buildDwzPair(tb testing.TB, a, b string) string {
	tb.Helper()
	if err := cc.Available(); err != nil {
		tb.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("dwz"); err != nil {
		tb.Skipf("skipping: dwz not found (install the Debian package dwz): %v", err)
	}
	dir := tb.TempDir()
	for n, src := range map[string]string{"a": a, "b": b} {
		if err := writeFile(dir, n+".c", src); err != nil {
			tb.Fatal(err)
		}
		if err := cc.Shared(dir, "lib"+n+".so", "", "", []string{n + ".c"}, "-Wl,--build-id"); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command("dwz", "-m", "common.debug", "-M", filepath.Join(dir, "common.debug"), "liba.so", "libb.so")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("dwz: %v\n%s", err, out)
	}
	return dir
}
