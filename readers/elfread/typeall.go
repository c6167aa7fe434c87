package elfread

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/typemodel"
)

// AllTypes fills the type graph with every struct, class, union and enum
// DIE of every unit of the DWARF and its parts at namespace scope, and
// every type they reach, on jobs workers, as ScanAll shares units among
// its workers (docs/layoutcheck.md#the-parallel-scan):
//
//  1. each worker takes a unit: it decodes the unit's roots at namespace
//     scope (rootTag), and what they reach inside the unit (a pointer, a
//     typedef, a type nested in a class or local to a function), links
//     them, and interns them among themselves; a node that refers outside its unit (dwz's supplement,
//     DW_FORM_ref_addr) is left open;
//  2. serially, in unit order, the open nodes are linked, and the units'
//     nodes are interned into the graph's one table (the first, in unit
//     order, of equal nodes is kept, so the graph is the same for every
//     jobs);
//  3. each worker points its unit's nodes at the nodes kept.
//
// Each DIE is decoded once; a type no root reaches (a prototype's
// restrict pointer) is left to At, which decodes it on demand. Type units
// are units like the others (typeunits.go). Run it before any At: the
// DIEs At decoded already are decoded again.
func (d *Debug) AllTypes(ctx context.Context, jobs int) (*Types, error) {
	if jobs < 1 {
		return nil, fmt.Errorf("-j %d: the number of workers is at least 1", jobs)
	}
	g := d.Types()
	// One AllTypes at a time; once one filled the graph, the others
	// return it.
	g.allMu.Lock()
	defer g.allMu.Unlock()
	if g.isFilled() {
		return g, nil
	}
	if err := d.allTypes(ctx, jobs); err != nil {
		return nil, err
	}
	return g, nil
}

// isFilled: an AllTypes filled the graph.
func (g *Types) isFilled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.filled
}

// allTypes is AllTypes under g.allMu, on a graph not filled yet.
func (d *Debug) allTypes(ctx context.Context, jobs int) error {
	g := d.Types()
	var items []scanItem
	for _, p := range d.all() {
		if err := p.ensure(p.infoZ, len(p.info)); err != nil {
			return err
		}
		if err := p.ensure(p.abbrevZ, len(p.abbrev)); err != nil {
			return err
		}
		for i := 0; ; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			u, ok, err := p.unit(i)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			items = append(items, scanItem{p: p, u: u, index: len(items)})
		}
	}
	// The table the units' declarations resolve through is made from the
	// index beside the workers (it reads nothing they write), instead of
	// in the serial join on its first need (typedecl.go).
	var defs chan map[declKey]declDefs
	if idx := g.scanned.Load(); idx != nil && g.defs == nil {
		defs = make(chan map[declKey]declDefs, 1)
		go func() { defs <- defsOf(idx) }()
	}
	res := make([]*unitGraph, len(items))
	// parallel starts no more workers than units (-j is the user's number).
	workers := make([]*typeWorker, min(jobs, max(len(items), 1)))
	build := func(w, i int) error {
		if workers[w] == nil {
			workers[w] = newTypeWorker()
		}
		var err error
		res[i], err = workers[w].buildUnit(items[i], g.void, false, nil)
		return err
	}
	var err error
	if buildBackwards {
		for i := len(items) - 1; i >= 0 && err == nil; i-- {
			err = build(0, i)
		}
	} else {
		err = parallel(ctx, len(items), jobs, build)
	}
	return g.finish(ctx, jobs, items, res, err, defs)
}

// buildUnit is step 1 for one unit, on the worker's scanner (made for the
// unit's part, when its last was another's): one scanner per worker and
// part, whose abbreviation slots and name copies serve every unit the
// worker takes. sigsLater: the units after this one may not be inflated
// yet, so a signature is not followed (errSigsLater). ix, when not nil,
// takes the unit's index entries from its walk (walkindex.go).
func (wk *typeWorker) buildUnit(it scanItem, void *typemodel.Type, sigsLater bool, ix *walkIndex) (*unitGraph, error) {
	ug := &unitGraph{p: it.p, u: it.u, void: void, index: it.index}
	if wk.sc == nil || wk.sc.d != ug.p {
		wk.sc = &scanner{d: ug.p, names: wk.names, recycle: true}
	}
	wk.sc.sigsLater = sigsLater
	err := Guard(func() error { return ug.build(wk, ix) })
	if err != nil {
		wk.sc = nil
	}
	return ug, err
}

// finish is steps 2 and 3 once every unit's graph is built (err: the
// first build error in unit order, nil when they all were), the
// declarations' table coming on defs when the index was there to make
// it: the units' errors are reported in unit order, the declarations
// looked up, the units joined into the graph and pointed at its nodes.
func (g *Types) finish(ctx context.Context, jobs int, items []scanItem, res []*unitGraph, err error, defs chan map[declKey]declDefs) error {
	if err != nil {
		for i, ug := range res {
			if ug != nil && ug.err != nil {
				return wrapUnitErr(items[i].p, ug.err)
			}
		}
		return err
	}
	for i, ug := range res {
		if ug.err != nil {
			return wrapUnitErr(items[i].p, ug.err)
		}
	}
	// The units' tables by offset, which join installs in the graph.
	tables := unitTables(res)
	if defs != nil {
		// Each unit's declarations looked up on the workers, with the
		// node of each one's definition in the units' tables; join
		// records them in unit order (libc's debug file: 13,755
		// declarations, most of join's time when it looked them up).
		table := <-defs
		// The nodes come from the units' tables only while the graph has
		// no node of its own by offset (At's, which lookup takes first).
		g.mu.RLock()
		early := len(g.nodes) == 0 && !noDeclNodes
		g.mu.RUnlock()
		err := parallel(ctx, len(res), jobs, func(_, i int) error {
			ug := res[i]
			ug.declDefs = make([]declDefs, len(ug.decls))
			if early {
				ug.declNodes = make([]*typemodel.Type, len(ug.decls))
			}
			for j, t := range ug.decls {
				k, _ := declKeyOf(t)
				dd := table[k]
				ug.declDefs[j] = dd
				if dd.ok && early {
					ug.declNodes[j], _ = findIn(tables, dd.off)
					if plantDeclSelf {
						ug.declNodes[j] = t
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		g.mu.Lock()
		if g.defs == nil {
			g.defs = table
		}
		g.mu.Unlock()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.clearKept() // on every return: the graph's nodes carry no scratch
	if err := g.join(ctx, res, tables); err != nil {
		return err
	}
	err = parallel(ctx, len(res), jobs, func(_, i int) error { res[i].repoint(); return nil })
	if err != nil {
		return err
	}
	g.clearKept()
	for _, ug := range res {
		if len(ug.offs) > 0 {
			g.units = append(g.units, unitTable{offs: ug.offs, nodes: ug.nodes})
		}
		if g.decodes != nil {
			for off, n := range ug.decodes {
				g.decodes[off] += n
			}
		}
	}
	g.filled = true
	return nil
}

func wrapUnitErr(p *Debug, err error) error {
	if _, ok := err.(*InputError); ok || err == context.Canceled || err == context.DeadlineExceeded {
		return err
	}
	return dwarfErr(p.Path(), err)
}

// parallel runs f(w, 0..n-1) on jobs workers (w: the worker); the first
// error (in index order) is returned once every worker stopped.
func parallel(ctx context.Context, n, jobs int, f func(w, i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(jobs, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				errs[i] = f(w, i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// typeWorker is what one AllTypes worker reuses from unit to unit: its
// scanner (abbreviation slots), its name copies and the maps of a unit's
// link, cleared (their room kept) for the next.
type typeWorker struct {
	sc    *scanner
	names map[string]string
	local *Types
	bound map[*typemodel.Type]bool
	taint map[*typemodel.Type]bool
	open  map[*typemodel.Type]bool
	extra map[uint64]*pending
	// at: build's table of a unit's nodes by offset (denseUnit), all
	// zero between units.
	at []int32
	// list: build's list of the unit's pending nodes, empty between
	// units.
	list []*pending
	// sorted: sortByOffset's scratch, empty between units.
	sorted []*pending
	// scopes: a C++ unit's scopes by DIE (uctx.scopes), empty between
	// units; one map grown once a worker, not once a unit (its growth was
	// an eighth of libstdc++'s page faults).
	scopes map[int]string
	// seen: the first node of every key among the worker's units' keep
	// lists, and its unit's place in the list of units (repsOf).
	seen map[internKey]seenRep
}

// seenRep is a node of repsOf's table and the place of its unit.
type seenRep struct {
	t    *typemodel.Type
	unit int
}

// denseUnit is the largest unit (in bytes of .debug_info) whose nodes
// build finds through a table indexed by offset: four bytes per byte of
// the unit, so at most 16 MiB per worker (the synthetic object's units
// are 1 MiB); a larger unit uses a binary search and a map. A variable
// so that a test can take the other path.
var denseUnit uint64 = 4 << 20

func newTypeWorker() *typeWorker {
	return &typeWorker{names: map[string]string{}, local: &Types{intern: map[internKey]*typemodel.Type{}, track: true},
		bound: map[*typemodel.Type]bool{}, taint: map[*typemodel.Type]bool{}, open: map[*typemodel.Type]bool{},
		extra: map[uint64]*pending{}, seen: map[internKey]seenRep{}}
}

// noReps turns repsOf off (the tests: the graph is the same without it).
// plantLooseReps, plantRepRefs and plantLaterReps are planted faults for
// the tests only: repsOf keys a function type without its parameters, so
// that it takes unequal nodes for one; dropReps leaves the unit's members
// pointing at the repeated nodes it recycles; repsOf takes a match from a
// unit after this one, which join has not kept yet. poisonRecycled (the
// tests) marks a recycled node instead of reusing it, so that a reference
// left to one shows in the graph.
var noReps, plantLooseReps, plantRepRefs, poisonRecycled, plantLaterReps bool

// noDeclNodes (the tests: the graph is the same without it) leaves every
// declaration's definition to join to look up; plantDeclSelf is a planted
// fault for the tests only: a declaration's definition is found as the
// declaration itself.
var noDeclNodes, plantDeclSelf bool

// buildBackwards is for the tests only: AllTypes builds the units on one
// worker from the last to the first (a worker's units out of order, as
// feedUnits' lister may take them).
var buildBackwards bool

// repsOf finds, for each node of a unit's keep list (children first, all
// linked inside the unit), the equal node an earlier unit of this worker
// listed: a library's units repeat their headers' types (libc's 55671
// listed nodes are 515 kinds), and dropReps then points the unit at
// those instead. Only a match from an earlier unit in the list of units
// (unit is this one's place) is taken, so that join has kept it when it
// reaches this unit, and keeps what it kept without the matching: two
// nodes equal here (the same key, their parts the same nodes or equal
// ones) are equal there. Kept holds a repeated node's match while the
// list is walked, so that its parents key by the match, and is nil again
// after.
func (wk *typeWorker) repsOf(keep []*typemodel.Type, unit int) []*typemodel.Type {
	if noReps {
		return nil
	}
	var rep []*typemodel.Type
	via := func(c *typemodel.Type) *typemodel.Type {
		if c != nil && c.Kept != nil {
			return c.Kept
		}
		return c
	}
	for i, t := range keep {
		if t == nil || t.Kind.Aggregate() || t.Kind == typemodel.Enum || t.Kind == typemodel.Void {
			continue
		}
		k := keyVia(t, via)
		if plantLooseReps {
			k.params, k.variadic = "", false
		}
		// A match only from an earlier unit: join has kept that one
		// before this unit. A worker's units are not always in order
		// (feedUnits' lister takes the queue's rest after the units it
		// built itself), and a node of a later unit is not kept yet when
		// this one's are: it is replaced by this unit's as its kind's
		// first.
		s, ok := wk.seen[k]
		if !ok || s.unit > unit && !plantLaterReps {
			wk.seen[k] = seenRep{t, unit}
			continue
		}
		r := s.t
		if rep == nil {
			rep = make([]*typemodel.Type, len(keep))
		}
		rep[i] = r
		t.Kept = r
	}
	for i, r := range rep {
		if r != nil {
			keep[i].Kept = nil
		}
	}
	return rep
}

// dropReps points the unit's references to each repeated node of keep
// (rep[i] is keep[i]'s match, repsOf) at its match, and takes the
// repeated nodes out of keep. The match is a node of an earlier unit of
// the worker (or, crafted, earlier in this unit's list), so join has kept
// it before this unit's node (units are joined in unit order, a list in
// its order) and reaches it from here as from there: keepOne and repoint
// follow its Kept. The repeated nodes the unit decoded are then
// referenced by nothing and serve the worker's next units (newType):
// libc's debug file decodes 135,565 nodes, of which 96,248 are repeats
// recycled so, 168 bytes each of fresh memory the kernel zeroed and the
// exit freed (docs/benchmarks.md#repeated-nodes-reused). Only a unit with no
// open node comes here: an open node's parts are linked by join, and a
// node the unit did not intern (a tainted one) may still reach a repeat.
func (ug *unitGraph) dropReps(sc *scanner, list []*pending, rep []*typemodel.Type) {
	keep := ug.keep
	for i, r := range rep {
		if r != nil {
			keep[i].Kept = r
		}
	}
	// Only a repeated node has Kept here (build cleared its interning's).
	sub := func(t *typemodel.Type) *typemodel.Type {
		if t != nil && t.Kept != nil {
			return t.Kept
		}
		return t
	}
	parts := func(t *typemodel.Type) {
		t.Elem, t.Class = sub(t.Elem), sub(t.Class)
		for i, p := range t.Params {
			t.Params[i] = sub(p)
		}
	}
	for i, t := range ug.nodes {
		ug.nodes[i] = sub(t)
	}
	// Every node the unit decoded (the nodes its interning dropped too,
	// which nothing reaches, but a repeat among their parts must not be
	// reached through them either), then the inner dimensions of arrays,
	// which no DIE stands for (Offset 0) and are in keep or bound only.
	for _, pd := range list {
		t := pd.t
		switch {
		case t.Kept != nil: // a repeat: dropped
		case t.Kind.Aggregate() || t.Kind == typemodel.Enum:
			if !plantRepRefs {
				for j := range t.Fields {
					t.Fields[j].Type = sub(t.Fields[j].Type)
				}
			}
			t.Elem = sub(t.Elem)
		default:
			parts(t)
		}
	}
	for _, t := range ug.bound {
		if t.Offset == 0 {
			parts(t)
		}
	}
	for i, t := range keep {
		if rep[i] == nil && t.Offset == 0 {
			parts(t)
		}
	}
	for _, pd := range list {
		if t := pd.t; t.Kept != nil {
			if poisonRecycled {
				// Offset stays: build's table of the unit is cleared by it.
				*t = typemodel.Type{Kind: typemodel.Base, Name: "<recycled>", HasSize: true, Size: -1, Offset: t.Offset}
				continue
			}
			sc.freeTypes = append(sc.freeTypes, t)
		}
	}
	n := 0
	for i, t := range keep {
		if rep[i] == nil {
			keep[n] = t
			n++
		} else {
			t.Kept = nil // a recycled node, or an inner dimension's (a heap node, garbage)
		}
	}
	clear(keep[n:])
	ug.keep = keep[:n]
}

// unitTables are the units' tables by offset, in unit order (a unit
// without nodes has none).
func unitTables(res []*unitGraph) []unitTable {
	var out []unitTable
	for _, ug := range res {
		if len(ug.offs) > 0 {
			out = append(out, unitTable{offs: ug.offs, nodes: ug.nodes})
		}
	}
	return out
}

// findIn is the node at off in tables (unit order).
func findIn(tables []unitTable, off uint64) (*typemodel.Type, bool) {
	i := sort.Search(len(tables), func(i int) bool { return tables[i].offs[len(tables[i].offs)-1] >= off })
	if i < len(tables) {
		return tables[i].find(off)
	}
	return nil, false
}

// unitTable is one unit's nodes by DIE offset, sorted.
type unitTable struct {
	offs  []uint64
	nodes []*typemodel.Type
}

func (t *unitTable) find(off uint64) (*typemodel.Type, bool) {
	i := sort.Search(len(t.offs), func(i int) bool { return t.offs[i] >= off })
	if i < len(t.offs) && t.offs[i] == off {
		return t.nodes[i], true
	}
	return nil, false
}

// unitGraph is one unit's share of AllTypes.
type unitGraph struct {
	p    *Debug
	u    *unit
	void *typemodel.Type
	// offs and nodes: the unit's nodes by DIE offset (sorted once built).
	offs  []uint64
	nodes []*typemodel.Type
	// open: nodes with a reference outside the unit, linked by join.
	open []*pending
	// unfinished: structs whose members' positions wait for a size from
	// outside the unit.
	unfinished []*pending
	// keep: the unit's non-aggregate nodes, children before parents, for
	// join's interning; bound: those that stay the unit's own.
	keep, bound []*typemodel.Type
	// decls: the unit's declared structs, classes and unions (in DIE
	// order), which join resolves to their definitions.
	decls []*typemodel.Type
	// declDefs: what each of decls's names has in the index, when
	// AllTypes looked them up before join (nil: join looks them up), and
	// declNodes the node of each definition found so in the units' tables
	// (nil where none was: join looks it up).
	declDefs  []declDefs
	declNodes []*typemodel.Type
	decodes   map[uint64]int
	err       error
	// index is the unit's place in the list of units, the order join
	// takes them in.
	index int
}

// build is step 1 for one unit.
func (ug *unitGraph) build(wk *typeWorker, ix *walkIndex) error {
	sc := wk.sc
	clear(wk.taint)
	clear(wk.open)
	clear(wk.extra)
	clear(wk.local.intern)
	// The unit's interning list is copied into keep and bound below: its
	// room serves the next unit (a fresh one per unit was 4 MB of libc's
	// allocation a run, docs/benchmarks.md#less-fresh-memory-per-die).
	clear(wk.local.order)
	wk.local.order, wk.local.chain = wk.local.order[:0], nil
	count := func(uint64) {}
	if countDecodes {
		ug.decodes = map[uint64]int{}
		count = func(off uint64) { ug.decodes[off]++ }
	}
	list, err := unitNodes(sc, ug.u, count, wk.list[:0], ix)
	// The list is the worker's scratch (the nodes outlive it, in offs,
	// keep, bound and open): kept for the next unit, however this ends.
	defer func() { clear(list); wk.list = list[:0] }()
	if err != nil {
		ug.err = err
		return err
	}
	base := uint64(ug.p.base)
	lo, hi := base+uint64(ug.u.dieStart), base+uint64(ug.u.end)
	// A node by its DIE's offset: in a unit of at most denseUnit bytes
	// through the worker's table of the unit's offsets (each holds its
	// node's place in list, 0 for none: one load per reference, where a
	// binary search and a map lookup were a twentieth of the link); in a
	// larger one the walk's nodes, in DIE order, by binary search, and
	// what the links decode besides through extra.
	walked := list
	extra := wk.extra
	var at []int32
	if span := hi - lo; span <= denseUnit {
		if uint64(cap(wk.at)) < span {
			// At least twice the last table: the units come in no order
			// of size, and a table made to each new largest one's measure
			// was most of the memory these tables took (libstdc++: 5.6
			// MB of fresh, faulted pages for a largest table of 0.7 MB).
			wk.at = make([]int32, min(max(span, 2*uint64(cap(wk.at))), denseUnit))
		}
		at = wk.at[:span]
		for i, pd := range list {
			at[pd.t.Offset-lo] = int32(i + 1)
		}
		// The table is the worker's: it is cleared for the next unit
		// however this one ends.
		defer func() {
			for _, pd := range list {
				at[pd.t.Offset-lo] = 0
			}
		}()
	}
	find := func(off uint64) (*pending, bool) {
		if at != nil {
			if j := int(at[off-lo]); j > 0 && j <= len(list) {
				return list[j-1], true
			}
			return nil, false
		}
		i := sort.Search(len(walked), func(i int) bool { return walked[i].t.Offset >= off })
		if i < len(walked) && walked[i].t.Offset == off {
			return walked[i], true
		}
		q, ok := extra[off]
		return q, ok
	}
	x := &uctx{sc: sc, u: ug.u, scoped: !cLanguage(sc.lang), scopes: wk.scopes}
	defer func() {
		if x.scopes != nil {
			clear(x.scopes)
			wk.scopes = x.scopes
		}
	}()
	open := wk.open
	// Link, decoding what the unit's nodes reach inside the unit.
	for i := 0; i < len(list); i++ {
		pd := list[i]
		resolve := func(r ref) (*typemodel.Type, bool) {
			if !r.set {
				return ug.void, true
			}
			if r.off < lo || r.off >= hi {
				return nil, false
			}
			if q, ok := find(r.off); ok {
				return q.t, true
			}
			q, err := x.decodeLocal(r.off, count)
			if err != nil {
				if ug.err == nil {
					ug.err = err
				}
				return nil, false
			}
			list = append(list, q)
			if at != nil {
				at[r.off-lo] = int32(len(list))
			} else {
				extra[r.off] = q
			}
			return q.t, true
		}
		if !pd.linkWith(resolve) {
			if ug.err != nil {
				return ug.err
			}
			open[pd.t] = true
			ug.open = append(ug.open, pd)
		}
	}
	// What depends on an open node waits for join: its interning, and a
	// struct's member positions when a member's size does.
	taint := wk.taint
	var tainted func(t *typemodel.Type, depth int) bool
	tainted = func(t *typemodel.Type, depth int) bool {
		if len(open) == 0 {
			return false
		}
		if t == nil || t.Kind.Aggregate() || t.Kind == typemodel.Enum || t.Kind == typemodel.Void {
			return open[t]
		}
		if v, ok := taint[t]; ok {
			return v
		}
		if depth > maxCanonDepth {
			return true
		}
		taint[t] = false // a loop inside the unit taints nothing by itself
		v := open[t] || tainted(t.Elem, depth+1) || tainted(t.Class, depth+1)
		for _, p := range t.Params {
			v = v || tainted(p, depth+1)
		}
		taint[t] = v
		return v
	}
	// Every node a link of the unit reaches is the unit's (open ones are
	// not linked yet): the batch is all fresh.
	b := &batch{order: list}
	for _, pd := range list {
		if open[pd.t] {
			continue
		}
		pd.finishPtrToMember()
		if !pd.t.Kind.Aggregate() || len(pd.fields) == 0 {
			continue
		}
		wait := false
		for i := range pd.fields {
			if tainted(pd.t.Fields[i].Type, 0) {
				wait = true
				break
			}
		}
		if wait {
			ug.unfinished = append(ug.unfinished, pd)
			continue
		}
		for i := range pd.fields {
			finishField(&pd.t.Fields[i], &pd.fields[i])
		}
	}
	// Interning inside the unit.
	local := wk.local
	// A chain longer than maxChain needs more nodes than that: a unit with
	// fewer has none to refuse.
	if len(list) > maxChain {
		if err := local.chains(b); err != nil {
			ug.err = err
			return err
		}
	}
	// The memo of the unit's interning is in its nodes (nil: Type.Kept,
	// cleared below), which only this worker touches.
	canon := func(t *typemodel.Type) *typemodel.Type {
		if t == nil || tainted(t, 0) {
			return t
		}
		return local.canon(t, b, nil, 0)
	}
	for _, pd := range list {
		t := pd.t
		if !t.Kind.Aggregate() && t.Kind != typemodel.Enum {
			continue
		}
		for i := range t.Fields {
			t.Fields[i].Type = canon(t.Fields[i].Type)
		}
		if t.Kind == typemodel.Enum && !open[t] {
			t.Elem = canon(t.Elem)
		}
	}
	ug.offs = make([]uint64, 0, len(list))
	ug.nodes = make([]*typemodel.Type, 0, len(list))
	sortByOffset(list, len(walked), &wk.sorted)
	for _, pd := range list {
		ug.offs = append(ug.offs, pd.t.Offset)
		ug.nodes = append(ug.nodes, canon(pd.t))
		if _, ok := declKeyOf(pd.t); ok {
			ug.decls = append(ug.decls, pd.t)
		}
	}
	for _, t := range local.memoed {
		t.Kept = nil
	}
	local.memoed = local.memoed[:0]
	// The nodes to intern into the graph, children first (the order
	// local.canon interned them in), then the tainted ones. A node bound
	// to one of the unit's structs or enums (struct foo *, a typedef of
	// one) can equal no other unit's node, whose struct is another node:
	// it is only pointed at the nodes kept (repoint).
	bound := wk.bound
	clear(bound)
	isBound := func(c *typemodel.Type) bool {
		return c != nil && (c.Kind.Aggregate() || c.Kind == typemodel.Enum || bound[c])
	}
	nb := 0
	for _, t := range local.order {
		b := isBound(t.Elem) || isBound(t.Class)
		for _, p := range t.Params {
			b = b || isBound(p)
		}
		if b {
			bound[t] = true
			nb++
		}
	}
	nt := 0
	isTainted := func(t *typemodel.Type) bool {
		return !t.Kind.Aggregate() && t.Kind != typemodel.Enum && t.Kind != typemodel.Void && tainted(t, 0)
	}
	if len(open) > 0 {
		for _, pd := range list {
			if isTainted(pd.t) {
				nt++
			}
		}
	}
	// Both lists live to the join: made of their exact length, where
	// appending from nil left half their room unused and copied the rest.
	ug.bound = make([]*typemodel.Type, 0, nb)
	ug.keep = make([]*typemodel.Type, 0, len(local.order)-nb+nt)
	for _, t := range local.order {
		if bound[t] {
			ug.bound = append(ug.bound, t)
		} else {
			ug.keep = append(ug.keep, t)
		}
	}
	if len(open) == 0 {
		if rep := wk.repsOf(ug.keep, ug.index); rep != nil {
			ug.dropReps(sc, list, rep)
		}
	}
	if nt > 0 {
		for _, pd := range list {
			if isTainted(pd.t) {
				ug.keep = append(ug.keep, pd.t)
			}
		}
	}
	// The pending nodes are done with unless join links or finishes some.
	sc.give(len(ug.open) == 0 && len(ug.unfinished) == 0)
	return nil
}

// decodeLocal decodes a DIE of the worker's own unit that a node reaches
// and the unit walk did not decode (a type nested in a class, or local to
// a function).
func (x *uctx) decodeLocal(off uint64, count func(uint64)) (*pending, error) {
	lo := int(off) - x.sc.d.base
	sc := x.sc
	sc.err = nil
	sc.c = newCursor(".debug_info", sc.d.info, lo, sc.d.order)
	sc.c.Limit(x.u.end)
	qual := ""
	if x.scoped && sc.qualifiedAt(lo) {
		qual = x.scopeOf(lo)
	}
	return sc.decodeType(off, qual, count)
}

// qualifiedAt: the DIE at lo (the cursor's offset, left there) is of a
// kind whose name takes its scope (decodeType's qualify); an unreadable
// one is left to decodeType to refuse.
func (sc *scanner) qualifiedAt(lo int) bool {
	code := sc.c.Uleb()
	if sc.c.Err() != nil || code >= uint64(len(sc.tab)) {
		sc.c = newCursor(".debug_info", sc.d.info, lo, sc.d.order)
		sc.c.Limit(sc.u.end)
		return true
	}
	sc.c.Seek(lo)
	switch sc.tab[code].tag {
	case tagStructType, tagClassType, tagUnionType, tagEnumerationType, tagTypedef:
		return true
	}
	return false
}

// linkWith sets the node's pointers through resolve; false (nothing set)
// when a reference cannot be resolved here.
func (pd *pending) linkWith(resolve func(ref) (*typemodel.Type, bool)) bool {
	t := pd.t
	var elem, class *typemodel.Type
	var params []*typemodel.Type
	ok := true
	get := func(r ref) *typemodel.Type {
		x, found := resolve(r)
		ok = ok && found
		return x
	}
	switch t.Kind {
	case typemodel.Struct, typemodel.Class, typemodel.Union, typemodel.Base, typemodel.Unspecified:
	case typemodel.Enum:
		if pd.elem.set {
			elem = get(pd.elem)
		}
	default:
		elem = get(pd.elem)
		if t.Kind == typemodel.PtrToMember && pd.class.set {
			class = get(pd.class)
		}
		if len(pd.params) > 0 {
			params = make([]*typemodel.Type, len(pd.params))
			for i, r := range pd.params {
				params[i] = get(r)
			}
		}
	}
	fields := make([]*typemodel.Type, len(pd.fields))
	for i := range pd.fields {
		fields[i] = get(pd.fields[i].typ)
	}
	if !ok {
		return false
	}
	if t.Kind == typemodel.Array {
		e := elem
		if len(pd.dims) > 0 {
			t.Count = pd.dims[0]
			for i := len(pd.dims) - 1; i >= 1; i-- {
				e = &typemodel.Type{Kind: typemodel.Array, Count: pd.dims[i], Elem: e}
			}
		}
		elem = e
	}
	t.Elem, t.Class, t.Params = elem, class, params
	for i := range fields {
		t.Fields[i].Type = fields[i]
	}
	return true
}

// finishPtrToMember sizes a pointer to member the DIE leaves unsized: a
// pointer to a data member is 8 bytes, to a member function 16 (x86-64
// Itanium C++ ABI).
func (pd *pending) finishPtrToMember() {
	t := pd.t
	if t.Kind == typemodel.PtrToMember && !t.HasSize {
		t.Size, t.HasSize = 8, true
		if s := typemodel.Strip(t.Elem); s != nil && s.Kind == typemodel.Func {
			t.Size = 16
		}
	}
}

// join is step 2: the open nodes are linked (through the units' tables
// and, for a DIE no unit walk reached, a decode here), the structs that
// waited are finished, and every unit's nodes are interned into the
// graph in unit order; each node's Kept is then the node kept for it.
func (g *Types) join(ctx context.Context, res []*unitGraph, tables []unitTable) error {
	g.units = append(g.units, tables...)
	// A declared class stands for its definition (typedecl.go): Kept takes
	// it there, so that every member, pointer and typedef naming it does.
	// most: the longest unit list, the size hint of the intern table (the
	// units repeat their headers' types: libc's 55671 listed nodes
	// intern to 515, so a hint from their sum cleared a table a hundred
	// times too large).
	n, most := 0, 0
	for _, ug := range res {
		n += len(ug.keep)
		most = max(most, len(ug.keep))
	}
	g.kept = make([]*typemodel.Type, 0, n)
	for _, ug := range res {
		for j, t := range ug.decls {
			var dd *declDefs
			if ug.declDefs != nil {
				dd = &ug.declDefs[j]
			}
			def, ok, err := g.resolveDeclFrom(ctx, t, dd)
			if err != nil {
				g.units = nil
				return err
			}
			if !ok {
				continue
			}
			var dt *typemodel.Type
			if ug.declNodes != nil && ug.declDefs[j].ok && ug.declDefs[j].off == def {
				dt = ug.declNodes[j]
			}
			if dt == nil {
				if dt, err = g.at(def); err != nil {
					g.units = nil
					return err
				}
			}
			g.keep(t, dt)
		}
	}
	var fail error
	resolve := func(r ref) (*typemodel.Type, bool) {
		if !r.set {
			return g.void, true
		}
		off := r.off
		if def, ok := g.declOff[off]; ok {
			off = def
		}
		t, err := g.at(off)
		if err != nil {
			if fail == nil {
				fail = err
			}
			return nil, false
		}
		return t, true
	}
	for _, ug := range res {
		for _, pd := range ug.open {
			if !pd.linkWith(resolve) {
				g.units = nil
				return fail
			}
			pd.finishPtrToMember()
			if pd.t.Kind.Aggregate() {
				ug.unfinished = append(ug.unfinished, pd)
			}
		}
	}
	for _, ug := range res {
		for _, pd := range ug.unfinished {
			for i := range pd.fields {
				finishField(&pd.t.Fields[i], &pd.fields[i])
			}
		}
		ug.open, ug.unfinished, ug.decls, ug.declDefs, ug.declNodes = nil, nil, nil, nil, nil
	}
	if len(g.intern) == 0 {
		g.intern = make(map[internKey]*typemodel.Type, most)
	}
	for _, ug := range res {
		for _, t := range ug.keep {
			// A unit's list is children first, each node once: a node of
			// it is met here before any other reaches it, so the lookup
			// of keepOne would miss (and interning a node again gives the
			// node it gave: its parts are kept already).
			if t == nil || t.Kind.Aggregate() || t.Kind == typemodel.Enum || t.Kind == typemodel.Void {
				g.keepOne(t, 0)
				continue
			}
			g.keepNew(t, 0)
		}
		ug.keep = nil
	}
	g.units = nil // installed, repointed, by AllTypes
	return nil
}

// keepOne interns a node of a unit into the graph: the node kept for it
// (its parts made the kept ones first).
func (g *Types) keepOne(t *typemodel.Type, depth int) *typemodel.Type {
	if t != nil && t.Kind.Aggregate() {
		if c := t.Kept; c != nil {
			return c // a declaration's definition
		}
		return t
	}
	if t == nil || t.Kind == typemodel.Enum || t.Kind == typemodel.Void {
		return t
	}
	if c := t.Kept; c != nil {
		return c
	}
	return g.keepNew(t, depth)
}

// keepNew is keepOne of a node kept does not hold (a struct, an enum or
// void is never passed). The nodes being interned are on g.keepPath, not
// marked in kept: a node is written to kept once, when it is done (two
// writes per node were a seventh of join), and a loop (crafted) is found
// on the path, which is at most maxCanonDepth long.
func (g *Types) keepNew(t *typemodel.Type, depth int) *typemodel.Type {
	if depth > maxCanonDepth {
		return t
	}
	for _, p := range g.keepPath {
		if p == t {
			return t // a loop (crafted)
		}
	}
	g.keepPath = append(g.keepPath, t)
	t.Elem = g.keepOne(t.Elem, depth+1)
	t.Class = g.keepOne(t.Class, depth+1)
	for i, p := range t.Params {
		t.Params[i] = g.keepOne(p, depth+1)
	}
	g.keepPath = g.keepPath[:len(g.keepPath)-1]
	k := keyOf(t)
	if c, ok := g.intern[k]; ok {
		g.keep(t, c)
		return c
	}
	g.intern[k] = t
	g.keep(t, t)
	return t
}

// keep records the node kept for t (join): in t itself, where a map
// keyed by node was an eighth of AllTypes' time (its lookups in repoint,
// its writes in keepNew), and listed so that AllTypes clears it.
func (g *Types) keep(t, c *typemodel.Type) {
	t.Kept = c
	g.kept = append(g.kept, t)
}

// clearKept clears the Kept join set.
func (g *Types) clearKept() {
	for _, t := range g.kept {
		t.Kept = nil
	}
	g.kept = nil
}

// repoint is step 3 for one unit: its table and its aggregates' members
// point at the nodes kept.
func (ug *unitGraph) repoint() {
	k := func(t *typemodel.Type) *typemodel.Type {
		// kept holds no enum or void, and of the structs only
		// declarations (join): those need no lookup.
		if t == nil || t.Kind == typemodel.Enum || t.Kind == typemodel.Void || t.Kind.Aggregate() && !t.Declaration {
			return t
		}
		if c := t.Kept; c != nil {
			return c
		}
		return t
	}
	for _, t := range ug.bound {
		t.Elem, t.Class = k(t.Elem), k(t.Class)
		for i, p := range t.Params {
			t.Params[i] = k(p)
		}
	}
	ug.bound = nil
	for i, t := range ug.nodes {
		if t.Kind.Aggregate() || t.Kind == typemodel.Enum {
			for j := range t.Fields {
				t.Fields[j].Type = k(t.Fields[j].Type)
			}
			if t.Kind == typemodel.Enum {
				t.Elem = k(t.Elem)
			}
			continue
		}
		ug.nodes[i] = k(t)
	}
}

// rootTag: unitNodes decodes a type DIE of this tag at namespace scope
// whether or not anything reaches it. The others (pointers, qualifiers,
// base types, arrays, function types, and in C typedefs) are decoded when
// a node of the unit reaches them, in build's link: most of a C
// library's are reached only by its functions' prototypes (libc's debug
// file: 33272 restrict pointers, 64392 pointers, 22462 consts listed,
// docs/benchmarks.md#less-fresh-memory-per-die), which no row spells. A
// C++ typedef stays a root: its name takes the scope the walk knows
// (decodeLocal would walk the unit's scopes again for it).
func rootTag(tag uint32, scoped bool) bool {
	switch tag {
	case tagStructType, tagClassType, tagUnionType, tagEnumerationType:
		return true
	case tagTypedef:
		return scoped
	}
	return false
}

// unitNodes decodes the struct, class, union and enum DIEs (rootTag) of
// one unit at namespace scope (and in namespaces), skipping every other
// subtree; the scanner stays set up for the unit. ix, when not nil, takes
// the unit's index entries from the same walk where it can (walkindex.go).
func unitNodes(sc *scanner, u *unit, count func(uint64), out []*pending, ix *walkIndex) ([]*pending, error) {
	p := sc.d
	if ix != nil {
		ix.ok = false
	}
	if err := sc.enterUnit(u); err != nil {
		return out, err
	}
	if ix != nil {
		ix.begin(sc)
		if !ix.ok {
			ix = nil
		}
	}
	if !sc.cuChildren {
		if ix != nil {
			ix.end(sc, false)
		}
		return out, nil
	}
	scoped := !cLanguage(sc.lang)
	stack := []string{""}
	base := uint64(p.base)
	for sc.c.Left() > 0 && len(stack) > 0 && sc.failed() == nil {
		at := sc.c.Off()
		code := sc.c.Uleb()
		if code == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		a := sc.abbrevAt(code)
		if a == nil {
			break
		}
		if _, ok := typeKind(a.tag); ok && !a.sig && rootTag(a.tag, scoped) {
			counted := false
			var named *Named
			if ix != nil {
				di := sc.scanAttrs(a)
				named, counted = ix.definition(sc, &di, at, a.tag)
			}
			sc.c.Seek(at)
			qual := ""
			if scoped {
				qual = stack[len(stack)-1]
			}
			if counted {
				sc.nested = &ix.out.nested
			}
			pd, err := sc.decodeType(base+uint64(at), qual, count)
			sc.nested = nil
			if err != nil {
				if ix != nil {
					ix.end(sc, true)
				}
				return out, err
			}
			if named != nil {
				named.node = pd.t
			}
			out = append(out, pd)
			continue
		}
		if a.tag == tagNamespace {
			di := sc.decode(a)
			if !di.children {
				continue
			}
			if len(stack) >= maxScopeDepth {
				sc.c.Fail("DIEs nest more than %d deep", maxScopeDepth)
				break
			}
			q := stack[len(stack)-1]
			if addsScope(&di) {
				q = qualify(q, string(di.name))
			}
			stack = append(stack, q)
			continue
		}
		if ix != nil && a.tag == tagTypedef {
			di := sc.scanAttrs(a)
			ix.typedef(sc, &di, at)
			sc.skipSubtree(&di)
			continue
		}
		if sc.passOver(a, u.end) {
			sc.skipChildren()
		}
	}
	if ix != nil {
		ix.end(sc, sc.failed() != nil)
	}
	return out, sc.failed()
}
