package elfread

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/typemodel"
)

// TestBuildDenseAndSearchAgree: AllTypes builds the same graph whether a
// unit's nodes are found through the worker's offset table (units up to
// denseUnit bytes) or by binary search and map (denseUnit 0), on
// libstdc++'s debug file (hundreds of units one worker after another: a
// table not cleared between units fails it) and a g++ object with nested
// types (decoded off the walk). Cost: four AllTypes of libstdc++'s 4 MiB
// of DWARF, about 2 s under -race.
func TestBuildDenseAndSearchAgree(t *testing.T) {
	for _, path := range []string{libstdcxxDebug, cxxObject(t)} {
		dense := graphDump(t, path)
		saved := denseUnit
		denseUnit = 0
		search := graphDump(t, path)
		denseUnit = saved
		if dense != search {
			a, b := strings.Split(dense, "\n"), strings.Split(search, "\n")
			for i := range min(len(a), len(b)) {
				if a[i] != b[i] {
					t.Fatalf("%s: the graphs differ first at line %d:\n table:  %s\n search: %s", path, i, a[i], b[i])
				}
			}
			t.Fatalf("%s: the graphs differ in length: %d and %d nodes", path, len(a), len(b))
		}
	}
}

// graphJobs is graphDump's -j.
var graphJobs = 2

// graphDump is every node of path's AllTypes graph (-j graphJobs) by
// offset: its kind, name, size, what it is made of and its members'
// names, offsets and types.
func graphDump(t *testing.T, path string) string {
	t.Helper()
	d := openDebugT(t, path)
	g, err := d.AllTypes(context.Background(), graphJobs)
	if err != nil {
		t.Fatal(err)
	}
	return dumpGraph(g)
}

// dumpGraph is graphDump of a filled graph.
func dumpGraph(g *Types) string {
	var lines []string
	g.each(func(off uint64, n *typemodel.Type) {
		var b strings.Builder
		fmt.Fprintf(&b, "%#x %v %q %d/%v %q", off, n.Kind, n.Name, n.Size, n.HasSize, typemodel.Spell(n))
		if n.Elem != nil {
			fmt.Fprintf(&b, " elem %#x", n.Elem.Offset)
		}
		for _, f := range n.Fields {
			fmt.Fprintf(&b, " | %s@%d:%d/%d %q %#x", f.Name, f.Offset, f.BitOffset, f.BitSize, typemodel.Spell(f.Type), f.Type.Offset)
		}
		lines = append(lines, b.String())
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
