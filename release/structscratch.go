package release

// layoutItem is one member of a struct structAt lays out: a field it can
// state, or a piece of an opaque range (start, end in bytes).
type layoutItem struct {
	start, end int64
	field      *xField
	cover      string
}

// structScratch is an extractAll worker's room for structAt: one level of
// lists per struct being read by value inside another (structDepth), and
// the member list of the last struct it wrote, for the next one. Fresh
// lists for every struct were a fifth of what extract --all allocated on
// the synthetic object
// (docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07). A nil
// scratch gives fresh lists.
type structScratch struct {
	levels []*structLevel
	fields []xField
}

// structLevel is the room of one depth of structAt.
type structLevel struct {
	items []layoutItem
	fbuf  []xField
}

// level is the room for the struct read at depth (1: a chunk's own).
func (sc *structScratch) level(depth int) *structLevel {
	if sc == nil || depth < 1 {
		return nil
	}
	for len(sc.levels) < depth {
		sc.levels = append(sc.levels, &structLevel{})
	}
	return sc.levels[depth-1]
}

// lists are empty lists with room for n members each.
func (lv *structLevel) lists(n int) ([]layoutItem, []xField) {
	if lv == nil {
		return make([]layoutItem, 0, n), make([]xField, 0, n)
	}
	items, fbuf := lv.items[:0], lv.fbuf[:0]
	if cap(items) < n {
		items = make([]layoutItem, 0, n)
	}
	if cap(fbuf) < n {
		fbuf = make([]xField, 0, n)
	}
	return items, fbuf
}

// keep takes the lists back once structAt is done with them.
func (lv *structLevel) keep(items []layoutItem, fbuf []xField) {
	if lv != nil {
		lv.items, lv.fbuf = items[:0], fbuf[:0]
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
	if sc != nil && cap(f) > cap(sc.fields) {
		sc.fields = f[:0]
	}
}
