package elfread

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/typemodel"
)

// TestFindEnums: an enum is found by its typedef name or its tag and reads
// as an enum of the type graph with its byte size and every enumerator, aliases
// included; FindEnums never returns a struct and FindStructs never an enum,
// though C lets a typedef and a tag of the other kind share a name.
func TestFindEnums(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	src := `typedef enum __attribute__((packed)) colour { RED = 1, CRIMSON = 1, BLUE = 300 } colour_t;
typedef enum wide { W_NEG = -1, W_BIG = 0x100000000 } wide_t;
typedef struct both { int x; } wide_s;
struct wide_s_user { wide_s s; colour_t c; wide_t w; } u;
typedef enum both_e { B_A } both;
both b;
`
	if err := os.WriteFile(filepath.Join(dir, "e.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "e.c", "e.o", "-g", "-fno-eliminate-unused-debug-types"); err != nil {
		t.Fatal(err)
	}
	dbg, err := OpenDebug(filepath.Join(dir, "e.o"), Lookup{})
	if err != nil {
		t.Fatal(err)
	}
	defer dbg.Close()
	found, err := dbg.FindEnums([][]string{{"colour_t"}, {"wide"}, {"wide_s"}, {"both"}, {"wide_s_user"}})
	if err != nil {
		t.Fatal(err)
	}
	if found[0] == nil || found[0].Via != "typedef colour_t" || found[1] == nil || found[1].Via != "enum wide" {
		t.Fatalf("colour_t, wide: %+v %+v", found[0], found[1])
	}
	if found[2] != nil || found[4] != nil {
		t.Errorf("FindEnums returned a struct: %+v %+v", found[2], found[4])
	}
	if found[3] == nil || found[3].Via != "typedef both" {
		t.Errorf("both (a typedef of an enum named as a struct tag): %+v", found[3])
	}
	g := dbg.Types()
	e, err := g.Enum(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if typemodel.SizeOf(e) != 2 || len(e.Enumerators) != 3 || e.Enumerators[1].Name != "CRIMSON" || e.Enumerators[1].Value != 1 {
		t.Fatalf("colour_t reads %#v", e)
	}
	e, err = g.Enum(found[1].Offset)
	if err != nil || typemodel.SizeOf(e) != 8 || e.Enumerators[0].Value != -1 || e.Enumerators[1].Value != 1<<32 {
		t.Fatalf("wide reads %#v (%v)", e, err)
	}
	structs, err := dbg.FindStructs([][]string{{"both"}, {"wide_s"}, {"colour_t"}})
	if err != nil {
		t.Fatal(err)
	}
	if structs[0] == nil || structs[0].Via != "struct both" || structs[1] == nil || structs[2] != nil {
		t.Errorf("FindStructs: %+v %+v %+v", structs[0], structs[1], structs[2])
	}
}
