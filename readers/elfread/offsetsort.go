package elfread

import (
	"cmp"
	"slices"
)

// byOffset orders pending nodes by their DIE's offset.
func byOffset(a, b *pending) int { return cmp.Compare(a.t.Offset, b.t.Offset) }

// sortByOffset puts a unit's pending nodes in DIE order, as the unit's
// table of nodes by offset (unitTable) needs them. Its first walked nodes
// are the walk's, which come in DIE order; the rest are the ones the links
// decoded besides, in the order the links reached them. Only the rest is
// sorted, and the two runs merged through buf, a worker's scratch: a sort
// of the whole list was 7% of libc's build
// (docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07). A head that is
// not in order (a walk this reader does not expect) is sorted whole.
func sortByOffset(list []*pending, walked int, buf *[]*pending) {
	head, tail := list[:walked], list[walked:]
	if !slices.IsSortedFunc(head, byOffset) {
		slices.SortFunc(list, byOffset)
		return
	}
	if len(tail) == 0 {
		return
	}
	slices.SortFunc(tail, byOffset)
	if len(head) == 0 || head[len(head)-1].t.Offset < tail[0].t.Offset {
		return
	}
	// The head is copied out; the merge writes list from the front, never
	// past the tail's next unread node (k = i + j <= walked + j).
	h := append((*buf)[:0], head...)
	i, j, k := 0, 0, 0
	for i < len(h) && j < len(tail) {
		if h[i].t.Offset <= tail[j].t.Offset {
			list[k] = h[i]
			i++
		} else {
			list[k] = tail[j]
			j++
		}
		k++
	}
	copy(list[k:], h[i:]) // what is left of the tail is in place already
	clear(h)
	*buf = h[:0]
}
