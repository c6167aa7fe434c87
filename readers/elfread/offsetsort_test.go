package elfread

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nrtabi/nrtabi/typemodel"
)

// TestSortByOffset: a walk's run in DIE order followed by the links' nodes
// in any order, or a head out of order, comes out as a whole sort leaves
// it, node for node, with the scratch empty after.
func TestSortByOffset(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []*pending
	for round := range 2000 {
		n := r.IntN(60)
		offs := r.Perm(4 * (n + 1))[:n] // distinct offsets
		walked := 0
		if n > 0 {
			walked = r.IntN(n + 1)
		}
		list := make([]*pending, n)
		for i, o := range offs {
			list[i] = &pending{t: &typemodel.Type{Offset: uint64(o)}}
		}
		if round%5 != 0 { // most rounds: the head in order, as a walk gives it
			slices.SortFunc(list[:walked], byOffset)
		}
		want := slices.Clone(list)
		slices.SortFunc(want, byOffset)
		sortByOffset(list, walked, &buf)
		for i := range want {
			if list[i] != want[i] {
				t.Fatalf("round %d (n %d, walked %d): node %d is at %#x, want %#x", round, n, walked, i, list[i].t.Offset, want[i].t.Offset)
			}
		}
		if len(buf) != 0 || slices.ContainsFunc(buf[:cap(buf)], func(p *pending) bool { return p != nil }) {
			t.Fatalf("round %d: the scratch still holds nodes", round)
		}
	}
}
