package elfread

import "github.com/nrtabi/nrtabi/typemodel"

// The pending nodes of a unit's decode, and their members as the DIEs
// state them, are scratch: AllTypes' link of the unit turns them into the
// graph's nodes and drops them. Carving them from slabs a worker reuses
// from unit to unit, instead of fresh ones per unit, keeps a library's
// hundreds of units from each taking (and the kernel from each zeroing)
// new pages: libc's debug file allocated 33 MB of pending nodes per run,
// a fifth of extract --all's allocation, all of it garbage by the join.

// pendingSlab is how many pending nodes one allocation holds.
const pendingSlab = 256

// pfieldArena is how many members one arena allocation holds (a struct
// with more gets an arena of its own size).
const pfieldArena = 4096

// pendingPool is a scanner's slabs and arenas: those the current unit
// took (used), and those free for the next unit (spare).
type pendingPool struct {
	used, spare     [][]pending
	arena           []pfield
	arenas, freeAre [][]pfield
}

// newPending is a pending node from the scanner's current slab (one
// allocation per pendingSlab nodes; the slab dies with the unit's link,
// or is reused for the next unit, give).
func (sc *scanner) newPending() *pending {
	if len(sc.slab) == cap(sc.slab) {
		pl := &sc.pool
		if n := len(pl.spare); n > 0 {
			sc.slab, pl.spare = pl.spare[n-1][:0], pl.spare[:n-1]
		} else {
			sc.slab = make([]pending, 0, pendingSlab)
		}
		if sc.recycle {
			pl.used = append(pl.used, sc.slab)
		}
	}
	sc.slab = sc.slab[:len(sc.slab)+1]
	return &sc.slab[len(sc.slab)-1]
}

// pfields is a copy of src, the members of one node, of exactly its
// length: from the unit's arena when the scanner recycles, else its own
// allocation.
func (sc *scanner) pfields(src []pfield) []pfield {
	if !sc.recycle {
		return append(make([]pfield, 0, len(src)), src...)
	}
	pl := &sc.pool
	if cap(pl.arena)-len(pl.arena) < len(src) {
		if n := len(pl.freeAre); n > 0 && cap(pl.freeAre[n-1]) >= len(src) {
			pl.arena, pl.freeAre = pl.freeAre[n-1][:0], pl.freeAre[:n-1]
		} else {
			pl.arena = make([]pfield, 0, max(pfieldArena, len(src)))
		}
		pl.arenas = append(pl.arenas, pl.arena)
	}
	n := len(pl.arena)
	pl.arena = append(pl.arena, src...)
	return pl.arena[n:len(pl.arena):len(pl.arena)]
}

// give ends the scanner's unit: when free (no pending node of the unit
// outlives it) its slabs and arenas are kept for the next unit; else they
// are left to the nodes that hold them, and the next unit starts new ones.
func (sc *scanner) give(free bool) {
	pl := &sc.pool
	if free {
		pl.spare = append(pl.spare, pl.used...)
		pl.freeAre = append(pl.freeAre, pl.arenas...)
	}
	clear(pl.used)
	clear(pl.arenas)
	pl.used, pl.arenas = pl.used[:0], pl.arenas[:0]
	sc.slab, pl.arena = nil, nil
}

// The graph's nodes and their member and enumerator lists outlive the
// unit, so they are reused only where the unit's own references to them
// are gone (a repeated node, dropReps); they are carved from chunks all the
// same, one allocation per chunk instead of one per node or list
// (docs/benchmarks.md#less-fresh-memory-per-die).
const (
	typeSlab   = 128  // nodes per chunk
	fieldArena = 1024 // members per chunk (a longer list is its own)
	enumArena  = 1024 // enumerators per chunk (likewise)
)

// newType is a node for decodeType to fill (it writes the whole node):
// one its worker recycled (dropReps), else the next of the scanner's
// current chunk.
func (sc *scanner) newType() *typemodel.Type {
	if n := len(sc.freeTypes); n > 0 {
		t := sc.freeTypes[n-1]
		sc.freeTypes = sc.freeTypes[:n-1]
		return t
	}
	if len(sc.types) == cap(sc.types) {
		sc.types = make([]typemodel.Type, 0, typeSlab)
	}
	sc.types = sc.types[:len(sc.types)+1]
	return &sc.types[len(sc.types)-1]
}

// fieldsOf is a copy of src of exactly its length (an append to it
// copies, as to any full slice).
func (sc *scanner) fieldsOf(src []typemodel.Field) []typemodel.Field {
	return carve(&sc.fieldArena, fieldArena, src)
}

// enumeratorsOf is fieldsOf for an enum's enumerators.
func (sc *scanner) enumeratorsOf(src []typemodel.Enumerator) []typemodel.Enumerator {
	return carve(&sc.enumArena, enumArena, src)
}

// carve copies src into the chunk *arena (a fresh chunk of size items when
// the rest is too short) and returns the copy capped at its length; a src
// over a quarter of a chunk gets an allocation of its own.
func carve[T any](arena *[]T, size int, src []T) []T {
	if len(src) > size/4 {
		return append(make([]T, 0, len(src)), src...)
	}
	if cap(*arena)-len(*arena) < len(src) {
		*arena = make([]T, 0, size)
	}
	n := len(*arena)
	*arena = append(*arena, src...)
	return (*arena)[n:len(*arena):len(*arena)]
}
