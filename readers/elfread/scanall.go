package elfread

import (
	"context"
	"debug/dwarf"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/typemodel"
)

// Named is a named type definition found by ScanAll: a struct, class,
// union or enum with a body, at namespace scope or nested in a named type.
type Named struct {
	Found
	Kind string // "struct", "class", "union" or "enum"
	// Size is DW_AT_byte_size; Sized is false when the DIE has none (an
	// incomplete type, a variable-size one).
	Size  int64
	Sized bool
	// Alias: another name a typedef gives a definition (Offset is the
	// definition's), which is listed under its own name too unless an
	// earlier unit took that name.
	Alias bool
	// qualified: Name is not the DIE's own name (a scope or a typedef).
	qualified bool
	// at orders the unit's list: the DIE, or for another name a typedef
	// gives a definition, the typedef's DIE.
	at int
	// First is, for a definition Later lists, the definition of its name
	// the index lists (nil for the others).
	First *Named
	// node is the definition's node in the graph, when the walk that
	// listed it decoded it (ScanAllTypes, walkindex.go): Index.Node.
	node *typemodel.Type
}

// Index is what ScanAll found: the first definition of every qualified
// name, in unit order, and what it passed over.
type Index struct {
	Types []*Named
	// Units is the number of units scanned; TypeUnits how many of them
	// are type units (-fdebug-types-section, typeunits.go).
	Units, TypeUnits int
	// InfoBytes is the size of .debug_info over every part.
	InfoBytes int64
	// Duplicates counts definitions of a name already taken by an earlier
	// unit (a C++ header's types are defined once per unit including it):
	// the first, in unit order, is the one listed.
	Duplicates int
	// Later lists those definitions, in unit order: an extractor tells an
	// identical copy from one the One Definition Rule forbids.
	Later []*Named
	// Anonymous counts definitions without a name no typedef gives one.
	Anonymous int
	// Nested counts the named definitions inside a struct, class or union
	// (std::string::_Alloc_hider): they are not listed, because a struct
	// is looked up by name at namespace scope only (FindStructs).
	Nested int
	// Qualified names every definition (the duplicates' too) whose
	// qualified name is not its DWARF name (a type in a namespace or a
	// class), by its offset. (The type graph's names are qualified
	// already.)
	Qualified map[dwarf.Offset]string
	// graph: the graph the definitions' nodes are of, when ScanAllTypes
	// built it in the same pass (nil otherwise: Node finds none).
	graph *Types
}

// Node is the graph's node of a definition the index lists (in Types or
// Later), when the index and the graph came from one pass over the units
// (ScanAllTypes) and the walk that listed the definition decoded it: the
// node Types.Struct or Types.Enum finds by its offset, without the lookup
// (an extractor comparing libc's 20,076 later definitions with their first
// made 40,000 of them, docs/benchmarks.md#repeated-nodes-reused). ok is
// false otherwise, when the caller looks it up by offset.
func (idx *Index) Node(n *Named) (t *typemodel.Type, ok bool) {
	if idx.graph == nil || n.node == nil || n.node.Offset != uint64(n.Offset) {
		return nil, false
	}
	return n.node, true
}

// DefaultJobs is ScanAll's parallelism when the caller has no preference:
// one worker per CPU.
func DefaultJobs() int { return runtime.NumCPU() }

// scanItem is one unit of one part: the unit of parallel work.
type scanItem struct {
	p *Debug
	u *unit
	// index is the unit's place in the list of units scanned.
	index int
}

// unitTypes is what one unit holds: its named definitions in DIE order.
type unitTypes struct {
	types             []*Named
	anonymous, nested int
	// foreign: typedefs naming a type unit's type, resolved by merge;
	// anonTU: a type unit's anonymous definitions, which such a typedef
	// may name (typeunits.go).
	foreign []foreignTypedef
	anonTU  []*Named
	err     error
}

// foreignTypedef is a typedef whose type is a type unit's, by signature.
type foreignTypedef struct {
	name string
	at   int
	sig  uint64
}

// plantCompletionOrder is a planted fault for the tests only: merge the
// per-unit results in the order the workers finished them instead of unit
// order. The determinism tests must fail with it set.
var plantCompletionOrder bool

// scanAllRuns counts the ScanAll runs (tests: a declaration resolves
// through the index made already).
var scanAllRuns atomic.Int64

// ScanAll finds every named struct, class, union and enum definition of
// the DWARF and its parts, scanning the units on jobs workers. The workers
// share the sections (one mapped or inflated copy, never one per worker)
// and each fills the result slot of the unit it took; the slots are merged
// in unit order, so the Index is the same for every jobs
// (docs/layoutcheck.md#the-parallel-scan). A compressed .debug_info is
// inflated unit by unit as the workers scan the units before
// (feedUnits): each reads only what was inflated before it got its unit,
// without locking. The first error in unit order is returned, whatever
// worker met it first.
func (d *Debug) ScanAll(ctx context.Context, jobs int) (*Index, error) {
	if jobs < 1 {
		return nil, fmt.Errorf("-j %d: the number of workers is at least 1", jobs)
	}
	idx := d.newIndex()
	var mu sync.Mutex
	order := []int{} // completion order (the planted fault's)
	slots, items, err := feedUnits(ctx, d, jobs, idx.count, func() func(scanItem, *unitTypes) {
		// One scanner per worker, for every unit of its part it takes.
		var sc *scanner
		return func(it scanItem, r *unitTypes) {
			sc = scanUnitTypes(ctx, sc, it, r)
			if plantCompletionOrder {
				mu.Lock()
				order = append(order, it.index)
				mu.Unlock()
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return d.indexOf(idx, items, slots, order)
}

// newIndex is an Index before its units are scanned.
func (d *Debug) newIndex() *Index {
	idx := &Index{}
	for _, p := range d.all() {
		idx.InfoBytes += int64(len(p.info))
	}
	return idx
}

// count is feedUnits' keep for a scan: every unit, the type units counted.
func (idx *Index) count(u *unit) bool {
	if u.typeUnit {
		idx.TypeUnits++
	}
	return true
}

// scanUnitTypes scans one unit for the index into r, with the worker's
// scanner sc (nil: one is made for the unit's part), and returns the
// scanner for the worker's next unit.
func scanUnitTypes(ctx context.Context, sc *scanner, it scanItem, r *unitTypes) *scanner {
	if err := ctx.Err(); err != nil {
		r.err = err
		return sc
	}
	if sc == nil || sc.d != it.p {
		sc = &scanner{d: it.p, rawSigs: true}
	}
	// SetPanicOnFault is per goroutine: each worker guards its own reads
	// of the mapping (fault.go).
	if err := Guard(func() error { *r = sc.unitTypes(it.u); return nil }); err != nil {
		*r = unitTypes{err: err}
		return nil
	}
	return sc
}

// indexOf merges the units' scans in unit order (order: the planted
// fault's completion order) into idx, and keeps the index for the graph's
// declarations.
func (d *Debug) indexOf(idx *Index, items []scanItem, slots []*unitTypes, order []int) (*Index, error) {
	idx.Units = len(items)
	res := make([]unitTypes, len(slots))
	for i, r := range slots {
		res[i] = *r
	}
	if !plantCompletionOrder {
		order = order[:0]
		for i := range items {
			order = append(order, i)
		}
	}
	scanAllRuns.Add(1)
	out, err := idx.merge(items, res, order)
	if err == nil && !plantCompletionOrder {
		// The index is the same for every jobs: the graph's declarations
		// resolve through it without a second scan (defsIndex).
		d.Types().scanned.Store(out)
	}
	return out, err
}

// merge lists the units' definitions in order, each qualified name once
// (the structs and the enums are separate name spaces, as in C).
func (idx *Index) merge(items []scanItem, res []unitTypes, order []int) (*Index, error) {
	seen := map[string]*Named{}
	idx.Qualified = map[dwarf.Offset]string{}
	add := func(t *Named) {
		if t.qualified {
			idx.Qualified[t.Offset] = t.Name
		}
		key := t.Name
		if t.Kind == "enum" {
			key = "enum " + key
		}
		if f := seen[key]; f != nil {
			idx.Duplicates++
			t.First = f
			idx.Later = append(idx.Later, t)
			return
		}
		seen[key] = t
		idx.Types = append(idx.Types, t)
	}
	// The definitions by offset, for the typedefs naming a type unit's
	// type (typeunits.go); an anonymous one a typedef names takes the
	// first such typedef's name, in unit order.
	var byOff map[dwarf.Offset]*Named
	anonTU := map[dwarf.Offset]bool{}
	for i := range res {
		if len(res[i].foreign) == 0 {
			continue
		}
		if byOff == nil {
			byOff = map[dwarf.Offset]*Named{}
			for j := range res {
				for _, t := range res[j].types {
					if !t.Alias {
						byOff[t.Offset] = t
					}
				}
				for _, t := range res[j].anonTU {
					byOff[t.Offset] = t
					anonTU[t.Offset] = true
				}
			}
		}
	}
	for _, i := range order {
		r := &res[i]
		p := items[i].p
		if r.err != nil {
			var ie *InputError
			if r.err != context.Canceled && r.err != context.DeadlineExceeded && !errors.As(r.err, &ie) {
				return nil, InputErrorf(p.Path(), "corrupted DWARF: %w", r.err)
			}
			return nil, r.err
		}
		idx.Anonymous += r.anonymous
		idx.Nested += r.nested
		for _, t := range r.types {
			add(t)
		}
		for _, td := range r.foreign {
			off, err := p.sigTarget(td.sig)
			if err != nil {
				return nil, InputErrorf(p.Path(), "corrupted DWARF: typedef %s at DIE %#x: %v", td.name, td.at, err)
			}
			t := byOff[dwarf.Offset(off)]
			if t == nil {
				continue // a typedef of a type that is no struct, union or enum
			}
			if anonTU[t.Offset] {
				delete(anonTU, t.Offset)
				t.Name, t.Via, t.qualified = td.name, "typedef "+td.name, true
				add(t)
				continue
			}
			add(&Named{Kind: t.Kind, Size: t.Size, Sized: t.Sized, Alias: true, at: td.at, qualified: true,
				Found: Found{Offset: t.Offset, Name: td.name, Via: "typedef " + td.name, DIE: t.DIE, File: t.File, From: t.From}})
		}
	}
	for i := range res {
		for _, t := range res[i].anonTU {
			if anonTU[t.Offset] || byOff == nil {
				idx.Anonymous++
			}
		}
	}
	return idx, nil
}

// typeScope is a scope of unitTypes' walk: whether its children are
// looked at, and the qualified name they are in.
type typeScope struct {
	scan   bool
	nested bool   // inside a struct, class or union: definitions are counted only
	qual   string // "a::b" of the enclosing namespaces ("" at the top)
}

// unitTypes walks one unit, decoding the named DIEs at namespace scope and
// inside named types, and skipping every other subtree (by its sibling
// pointer when it has one).
func (sc *scanner) unitTypes(u *unit) (out unitTypes) {
	if out.err = sc.enterUnit(u); out.err != nil || !sc.cuChildren {
		return out
	}
	// Anonymous definitions by offset, and the typedefs that may name
	// them (gcc writes `typedef struct {...} t;` as the struct, then the
	// typedef; the order is not relied on).
	ts := sc.typeScan()
	anon, stubs := ts.anon, ts.stubs
	typedefs := ts.typedefs[:0]
	defer func() { clear(typedefs); ts.typedefs = typedefs[:0] }()
	stack := []typeScope{{scan: true}}
	for sc.c.Left() > 0 && len(stack) > 0 && sc.failed() == nil {
		dieOff := sc.c.Off()
		code := sc.c.Uleb()
		if code == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		a := sc.abbrevAt(code)
		if a == nil {
			break
		}
		if a.children && len(stack) >= maxScopeDepth {
			sc.c.Fail("DIEs nest more than %d deep", maxScopeDepth)
			break
		}
		top := stack[len(stack)-1]
		if a.sig && top.scan && a.named {
			// A stub of a type unit's type, which a typedef of the unit
			// may name.
			if di := sc.decode(a); di.hasStubSig {
				stubs[dieOff] = di.stubSig
			}
			if a.children {
				stack = append(stack, typeScope{})
			}
			continue
		}
		if !top.scan || !a.named {
			if sc.passOver(a, u.end) {
				stack = append(stack, typeScope{})
			}
			continue
		}
		di := sc.decode(a)
		if sc.failed() != nil {
			break
		}
		if di.spec != 0 && u.typeUnit && len(stack) == 1 {
			// A type unit's definition at its top is where its
			// declaration is (typeunits.go).
			q, nested := sc.specQual(di.spec)
			top = typeScope{scan: true, nested: nested, qual: q}
		}
		name := string(di.name)
		inner := typeScope{}
		switch a.tag {
		case tagNamespace:
			inner = typeScope{scan: true, qual: top.qual}
			if addsScope(&di) {
				inner.qual = qualify(top.qual, name)
			}
		case tagTypedef:
			if !top.nested && name != "" && di.hasTypSig {
				out.foreign = append(out.foreign, foreignTypedef{qualify(top.qual, name), dieOff, di.typSig})
			} else if !top.nested && name != "" && di.typ > 0 && !di.typAlt && di.typ >= u.dieStart && di.typ < u.end {
				typedefs = append(typedefs, typedefAt{qualify(top.qual, name), dieOff, di.typ})
			}
		default: // struct, class, union, enum
			if di.decl {
				break
			}
			if top.nested {
				if name != "" {
					out.nested++
				}
				if a.tag != tagEnumerationType {
					inner = typeScope{scan: true, nested: true}
				}
				break
			}
			t := sc.named(dieOff, qualify(top.qual, name), a.tag)
			t.qualified = top.qual != ""
			t.Size, t.Sized = int64(min(di.size, typemodel.MaxSize)), di.sized
			if name == "" {
				anon[dieOff] = t
				break
			}
			out.types = append(out.types, t)
			if a.tag != tagEnumerationType {
				inner = typeScope{scan: true, nested: true}
			}
		}
		if !di.children {
			continue
		}
		if !inner.scan && di.sibling > sc.c.Off() && di.sibling <= u.end {
			sc.c.Seek(di.sibling)
			continue
		}
		stack = append(stack, inner)
	}
	if out.err = sc.failed(); out.err != nil {
		return out
	}
	return sc.listTypes(u, out, ts, typedefs)
}

// listTypes lists a unit's definitions once its walk found them (out.types
// and ts.anon, the anonymous ones, by offset), with the other names the
// unit's typedefs give them, in DIE order. A typedef names a definition of
// the unit, through typedefs as FindStructs follows them. The first
// typedef of an anonymous one (in DIE order) gives it its name, and it is
// listed where it was defined; any other is another name of it, listed
// where the typedef is, as FindStructs would find it there.
func (sc *scanner) listTypes(u *unit, out unitTypes, ts *typeScanScratch, typedefs []typedefAt) unitTypes {
	anon, stubs := ts.anon, ts.stubs
	defs, tdTo, named := ts.defs, ts.tdTo, ts.named
	for _, t := range out.types {
		defs[int(t.DIE)] = t
	}
	for off, t := range anon {
		defs[off] = t
	}
	for _, td := range typedefs {
		tdTo[td.at] = td.to
	}
	resolve := func(to int) *Named {
		for range 16 {
			if t := defs[to]; t != nil {
				return t
			}
			next, ok := tdTo[to]
			if !ok {
				return nil
			}
			to = next
		}
		return nil
	}
	all := out.types
	for _, td := range typedefs {
		t := resolve(td.to)
		if t == nil {
			if sig, ok := stubs[td.to]; ok {
				out.foreign = append(out.foreign, foreignTypedef{td.name, td.at, sig})
			}
			continue
		}
		if _, isAnon := anon[int(t.DIE)]; isAnon && !named[int(t.DIE)] {
			named[int(t.DIE)] = true
			t.Name = td.name
			t.Via = "typedef " + td.name
			t.qualified = true
			continue
		}
		all = append(all, &Named{Kind: t.Kind, Size: t.Size, Sized: t.Sized, Alias: true, at: td.at, node: t.node,
			Found: Found{Offset: t.Offset, Name: td.name, Via: "typedef " + td.name, DIE: t.DIE, File: t.File, From: t.From}})
	}
	for off, t := range anon {
		switch {
		case named[off]:
			all = append(all, t)
		case u.typeUnit:
			out.anonTU = append(out.anonTU, t)
		default:
			out.anonymous++
		}
	}
	sortNamed(out.anonTU)
	sortNamed(all)
	out.types = all
	return out
}

// typedefAt is a typedef of unitTypes' unit at namespace scope: its
// qualified name, its DIE and the DIE it names (both unit offsets).
type typedefAt struct {
	name   string
	at, to int
}

// typeScanScratch is unitTypes' per-unit scratch, kept by the scanner
// from unit to unit and cleared between them: fresh maps and lists per
// unit were a sixth of ScanAll's allocation on libc's debug file
// (docs/benchmarks.md#less-fresh-memory-per-die).
type typeScanScratch struct {
	anon     map[int]*Named
	stubs    map[int]uint64
	defs     map[int]*Named
	tdTo     map[int]int
	named    map[int]bool
	typedefs []typedefAt
}

// typeScan is the scanner's scratch for unitTypes, cleared.
func (sc *scanner) typeScan() *typeScanScratch {
	ts := sc.tscan
	if ts == nil {
		ts = &typeScanScratch{anon: map[int]*Named{}, stubs: map[int]uint64{}, defs: map[int]*Named{},
			tdTo: map[int]int{}, named: map[int]bool{}}
		sc.tscan = ts
	}
	clear(ts.anon)
	clear(ts.stubs)
	clear(ts.defs)
	clear(ts.tdTo)
	clear(ts.named)
	return ts
}

// named is a Named for a DIE of the unit being scanned.
func (sc *scanner) named(dieOff int, qual string, tag uint32) *Named {
	p := sc.d
	kind := kindWord(tag)
	return &Named{Kind: kind, at: dieOff, Found: Found{Offset: dwarf.Offset(p.base + dieOff), Name: qual, Via: kind + " " + qual,
		DIE: dwarf.Offset(dieOff), File: p.Path(), From: p.Via}}
}

// sortNamed puts a unit's names in DIE order (not in the maps' random
// order).
func sortNamed(ts []*Named) {
	slices.SortFunc(ts, func(a, b *Named) int { return a.at - b.at })
}

func qualify(scope, name string) string {
	if scope == "" {
		return name
	}
	var b strings.Builder
	b.Grow(len(scope) + 2 + len(name))
	b.WriteString(scope)
	b.WriteString("::")
	b.WriteString(name)
	return b.String()
}
