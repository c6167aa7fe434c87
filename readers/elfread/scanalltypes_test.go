package elfread

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// graphText is every definition idx lists, with its layout as the graph
// has it, in the index's order: what extract --all reads of the two.
func graphText(t *testing.T, idx *Index, g *Types) []string {
	t.Helper()
	var out []string
	for _, n := range idx.Types {
		s, err := g.At(n.Offset)
		if err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		out = append(out, fmt.Sprintf("%s %#x alias=%v %s", n.Via, n.Offset, n.Alias, layoutText(n.Kind+" "+n.Name, s)))
	}
	return out
}

// TestScanAllTypesSameAsTwoPasses: ScanAllTypes (the types decoded
// beside the scan) gives the index and the graph of ScanAll then
// AllTypes, at -j 1 and 2, with and without type units (DWARF 4 and 5):
// a unit that may name a type unit is left for after the listing (its
// signatures resolve only once every unit header is read), the others
// are decoded in the feed (in the fixture with type units every unit may
// name one: all are left for later). With the planted fault (no abbreviation check)
// the decode meets the signature itself, and the scanner's refusal must
// still leave the unit for later, with the same graph.
func TestScanAllTypesSameAsTwoPasses(t *testing.T) {
	for _, v := range []string{"4", "5"} {
		for _, typed := range []bool{false, true} {
			path := tuLib(t, v, typed)
			d := openDebugT(t, path)
			g, err := d.AllTypes(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := d.ScanAll(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			want := graphText(t, idx, g)
			if len(want) < 8 {
				t.Fatalf("%s lists %d types: %q", path, len(want), want)
			}
			for _, plant := range []bool{false, true} {
				for _, j := range []int{1, 2} {
					name := fmt.Sprintf("dwarf%s/types=%v/j%d/plant=%v", v, typed, j, plant)
					plantNoSigRefsCheck = plant
					built, later := fedBuilt.Load(), fedLater.Load()
					d := openDebugT(t, path)
					idx, g, err := d.ScanAllTypes(context.Background(), j)
					plantNoSigRefsCheck = false
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					built, later = fedBuilt.Load()-built, fedLater.Load()-later
					if got := graphText(t, idx, g); !slices.Equal(got, want) {
						t.Errorf("%s: ScanAllTypes\n%s\nScanAll, AllTypes\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					if !typed && int(built) != idx.Units {
						t.Errorf("%s: %d of %d units decoded beside the listing", name, built, idx.Units)
					}
					if typed && later == 0 {
						t.Errorf("%s: no unit was left for after the listing, with type units (%d decoded in the feed)", name, built)
					}
					if !typed && later != 0 {
						t.Errorf("%s: %d units left for after the listing without type units", name, later)
					}
					t.Logf("%s: %d units decoded in the feed, %d after", name, built, later)
				}
			}
		}
	}
}
