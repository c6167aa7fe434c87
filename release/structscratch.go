package release

// layoutItem is one member of a struct structAt lays out: a field it can
// state, or a piece of an opaque range (start, end in bytes).
type layoutItem struct {
	start, end int64
	field      *xField
	cover      string
}

// structScratch is an extractAll worker's room for structAt's lists (the
// layout's items and the fields they point to) and for the member list of
// the last struct it wrote, kept for the next one. Fresh lists for every
// struct were a fifth of what extract --all allocated on the synthetic
// object, and kept its collector running
// (docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07). A worker
// reads no struct inside another (specType names a struct member's row),
// so one set of lists serves; a struct read inside another would get
// fresh ones, as would every struct with a nil scratch (extractFrom).
type structScratch struct {
	items  []layoutItem
	fbuf   []xField
	fields []xField
	seen   map[string]bool // repeatedNames's, empty between calls
}

// names is an empty map for repeatedNames (nil: a fresh one), the
// worker's at any depth: the map is only used inside the call.
// A map grown past maxSeen names is dropped rather than cleared: clear
// walks all of its room, which one struct of thousands of members would
// leave to every struct after it.
func (sc *structScratch) names() map[string]bool {
	if sc == nil {
		return nil
	}
	if sc.seen == nil || len(sc.seen) > maxSeen {
		sc.seen = map[string]bool{}
	}
	if !plantStaleNames {
		clear(sc.seen)
	}
	return sc.seen
}

// maxSeen bounds the names map a worker keeps (names).
const maxSeen = 1024

// Test hooks: freshStructLists gives extractAll's workers no scratch and
// a fresh row for every struct (rowFor); plantStaleFields, plantStaleRow
// and plantStaleNames are planted faults, a written struct's member list,
// its row's or its member names (repeatedNames), handed on with its
// members still in it, which TestExtractAllScratch must catch.
var freshStructLists, plantStaleFields, plantStaleRow, plantStaleNames bool

// newStructScratch is a worker's scratch (nil under freshStructLists).
func newStructScratch() *structScratch {
	if freshStructLists {
		return nil
	}
	return &structScratch{}
}

// lists are empty lists with room for n members each, the worker's when
// the struct is read at depth 1 (not inside another struct).
func (sc *structScratch) lists(depth, n int) ([]layoutItem, []xField) {
	if sc == nil || depth != 1 {
		return make([]layoutItem, 0, n), make([]xField, 0, n)
	}
	items, fbuf := sc.items[:0], sc.fbuf[:0]
	if cap(items) < n {
		items = make([]layoutItem, 0, n)
	}
	if cap(fbuf) < n {
		fbuf = make([]xField, 0, n)
	}
	return items, fbuf
}

// keep takes back the lists lists gave for depth.
func (sc *structScratch) keep(depth int, items []layoutItem, fbuf []xField) {
	if sc != nil && depth == 1 {
		sc.items, sc.fbuf = items[:0], fbuf[:0]
	}
}

// takeFields is the room a written struct left (nil: none).
func (sc *structScratch) takeFields() []xField {
	if sc == nil {
		return nil
	}
	f := sc.fields
	sc.fields = nil
	return f
}

// giveFields keeps the member list of a struct whose row is written.
func (sc *structScratch) giveFields(f []xField) {
	if sc == nil || cap(f) <= cap(sc.fields) {
		return
	}
	if plantStaleFields {
		sc.fields = f
		return
	}
	sc.fields = f[:0]
}
