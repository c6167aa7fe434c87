package elfread

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// A want's earlier name wins over a later one whatever the order of the
// units that define them (FindStructs): ld.so defines struct list in one
// unit and typedef struct list_head list_t in another, and a spec struct
// list (names list, then the alias list_t) is struct list either way.
func TestFindStructsNameRank(t *testing.T) {
	dir := t.TempDir()
	head := "struct list_head { struct list_head *next, *prev; };\ntypedef struct list_head list_t;\nlist_t *use_head(list_t *l) { return l; }\n"
	list := "struct link_map;\nstruct list { int done; struct link_map *map; struct list *next; };\nstruct list *use_list(struct list *l) { return l; }\n"
	for _, src := range []struct{ name, text string }{{"head.c", head}, {"list.c", list}} {
		if err := writeFile(dir, src.name, src.text); err != nil {
			t.Fatal(err)
		}
	}
	for _, order := range [][]string{{"head.c", "list.c"}, {"list.c", "head.c"}} {
		so := filepath.Join(dir, "lib"+order[0]+".so")
		if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", so, order[0], order[1]); err != nil {
			t.Fatal(err)
		}
		f, err := Open(so)
		if err != nil {
			t.Fatal(err)
		}
		dbg, err := FindDebug(context.Background(), f, Lookup{})
		if err != nil {
			t.Fatal(err)
		}
		found, err := dbg.FindStructs([][]string{{"list", "list_t"}, {"list_t", "list"}, {"nolist", "list_t"}, {"nolist"}})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{"struct list", "typedef list_t", "typedef list_t", ""} {
			got := ""
			if found[i] != nil {
				got = found[i].Via
			}
			if got != want {
				t.Errorf("units %v, want %d: found by %q, want %q", order, i, got, want)
			}
		}
		dbg.Close()
		f.Close()
	}
}
