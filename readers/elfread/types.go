package elfread

import (
	"debug/dwarf"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/typemodel"
)

// Types is the type graph of one Debug (typemodel), built from the DWARF
// by the package's own scanner: each DIE is decoded at most once, into one
// node, and equal non-aggregate types (int, const char *) are one node
// however many units define them. It is lazy: At decodes what the type at
// an offset reaches and no more (show and check read only what their
// structs reach); AllTypes fills it from every unit on parallel workers
// first (extract --all). Offsets are the combined offsets of the Debug
// and its parts (Found.Offset). A Types is safe for concurrent use.
type Types struct {
	d *Debug
	// mu guards the graph; At's lookup of a node already there takes it
	// shared, so that parallel readers of a filled graph (extract --all's
	// ODR comparisons and struct rows) do not queue on it.
	mu sync.RWMutex
	// nodes maps a DIE's combined offset to its node (after interning,
	// the canonical node of its kind, name and parts).
	nodes  map[uint64]*typemodel.Type
	ctxs   map[ctxKey]*uctx
	void   *typemodel.Type
	intern map[internKey]*typemodel.Type
	// chain is the length of each node's chain of derived types (chains).
	chain map[*typemodel.Type]int
	// failed remembers the offsets whose decoding failed, with the error,
	// so that a second At reports the same error without decoding again.
	failed map[uint64]error
	// decodes counts the decodes of each DIE when set (tests: at most
	// one each).
	decodes map[uint64]int
	// units are AllTypes' nodes, one sorted table per unit (filled: it
	// ran); nodes holds what At decoded besides.
	units  []unitTable
	filled bool
	allMu  sync.Mutex // held by AllTypes
	// kept lists the unit nodes join set Kept on (the node interned for
	// each), for AllTypes to clear.
	kept []*typemodel.Type
	// keepPath is join's path of nodes being interned (keepNew).
	keepPath []*typemodel.Type
	// order lists the nodes interned, in order, for a unit's own table
	// (AllTypes' workers); nil in the graph.
	order []*typemodel.Type
	track bool
	// memoed lists the nodes canon set Kept on (a worker's unit graph).
	memoed []*typemodel.Type
	// defs is the definitions a declaration resolves to, made on first
	// need (typedecl.go); declOff maps a declared aggregate's DIE to its
	// definition's, unresolved to why it has none.
	defs       map[declKey]declDefs
	declOff    map[uint64]uint64
	unresolved map[uint64]string
	// scanned is the Index the last ScanAll of the Debug made, which
	// defsIndex reads instead of scanning every unit again (extract --all
	// runs ScanAll before AllTypes).
	scanned atomic.Pointer[Index]
}

type ctxKey struct {
	p   *Debug
	off int
}

// uctx is one unit's decoding context: its scanner (abbreviations, string
// offsets base) and, for a C++ unit, the scopes of its named DIEs.
type uctx struct {
	sc     *scanner
	u      *unit
	scoped bool
	scopes map[int]string // made on first need
	// scopesTo: every named DIE before this offset has its scope in
	// scopes. prefix: the walk goes only as far as the DIEs asked for
	// (a lookup's, scopeOf), not over the whole unit at once (AllTypes',
	// whose links ask for DIEs anywhere in it).
	scopesTo int
	prefix   bool
}

// plantScopeStopShort is a planted fault for the tests only: a prefix
// walk of a unit's scopes stops before the DIE asked for instead of
// after it.
var plantScopeStopShort bool

// countDecodes makes every Types count its decodes per DIE (tests).
var countDecodes bool

// plantSecondDecode makes the link step decode the first DIE it decoded
// once more (tests: the decode-once hook must catch it).
var plantSecondDecode bool

// Types is the Debug's type graph, made on first use.
func (d *Debug) Types() *Types {
	d.typesOnce.Do(func() {
		d.types = &Types{d: d, nodes: map[uint64]*typemodel.Type{}, ctxs: map[ctxKey]*uctx{},
			void: &typemodel.Type{Kind: typemodel.Void, Name: "void"}, intern: map[internKey]*typemodel.Type{},
			failed: map[uint64]error{}, declOff: map[uint64]uint64{}, unresolved: map[uint64]string{}}
		if countDecodes {
			d.types.decodes = map[uint64]int{}
		}
	})
	return d.types
}

// Decodes is how many times each DIE was decoded, when counting is on
// (tests only); nil otherwise.
func (g *Types) Decodes() map[uint64]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.decodes == nil {
		return nil
	}
	out := make(map[uint64]int, len(g.decodes))
	for k, v := range g.decodes {
		out[k] = v
	}
	return out
}

// Len is the number of DIE offsets the graph holds a node for.
func (g *Types) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.nodes)
	for i := range g.units {
		n += len(g.units[i].offs)
	}
	return n
}

// each calls f with every node of the graph and its DIE offset (tests).
func (g *Types) each(f func(off uint64, t *typemodel.Type)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for off, t := range g.nodes {
		f(off, t)
	}
	for i := range g.units {
		for j, off := range g.units[i].offs {
			f(off, g.units[i].nodes[j])
		}
	}
}

// lookup is the node of a DIE the graph holds.
func (g *Types) lookup(off uint64) (*typemodel.Type, bool) {
	if t, ok := g.nodes[off]; ok {
		return t, true
	}
	return findIn(g.units, off)
}

func (g *Types) count(off uint64) {
	if g.decodes != nil {
		g.decodes[off]++
	}
}

// At is the node of the type DIE at off, decoding it and every type it
// reaches that is not in the graph yet. An error names the file and the
// DIE; the graph is unchanged by a failed At.
func (g *Types) At(off dwarf.Offset) (*typemodel.Type, error) {
	g.mu.RLock()
	t, ok := g.lookup(uint64(off))
	g.mu.RUnlock()
	if ok {
		return t, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.at(uint64(off))
}

// Struct is At for a struct, class or union.
func (g *Types) Struct(off dwarf.Offset) (*typemodel.Type, error) {
	t, err := g.At(off)
	if err != nil {
		return nil, err
	}
	if !t.Kind.Aggregate() {
		return nil, fmt.Errorf("DIE at %#x is a %s, not a struct", off, t.Kind)
	}
	return t, nil
}

// Enum is At for an enum.
func (g *Types) Enum(off dwarf.Offset) (*typemodel.Type, error) {
	t, err := g.At(off)
	if err != nil {
		return nil, err
	}
	if t.Kind != typemodel.Enum {
		return nil, fmt.Errorf("DIE at %#x is a %s, not an enum", off, t.Kind)
	}
	return t, nil
}

// Where names the file holding a DIE of the combined offset space and the
// DIE's offset in that file's .debug_info.
func (g *Types) Where(off dwarf.Offset) (path string, local dwarf.Offset) {
	p, lo := g.d.part(uint64(off))
	if p == nil {
		return g.d.Path(), off
	}
	return p.Path(), dwarf.Offset(lo)
}

// part finds the part holding a combined offset and the offset in it.
func (d *Debug) part(off uint64) (*Debug, int) {
	if off < uint64(len(d.info)) {
		return d, int(off)
	}
	i := sort.Search(len(d.parts), func(i int) bool { return uint64(d.parts[i].base+len(d.parts[i].info)) > off })
	if i < len(d.parts) && off >= uint64(d.parts[i].base) {
		return d.parts[i], int(off) - d.parts[i].base
	}
	return nil, 0
}

func (g *Types) at(off uint64) (*typemodel.Type, error) {
	if t, ok := g.lookup(off); ok {
		return t, nil
	}
	if err, ok := g.failed[off]; ok {
		return nil, err
	}
	if err := g.link([]uint64{off}, nil); err != nil {
		g.failed[off] = err
		return nil, err
	}
	return g.nodes[off], nil
}

// ctx is the decoding context of the unit holding a combined offset, with
// the offset in its part.
func (g *Types) ctx(off uint64) (*uctx, int, error) {
	p, lo := g.d.part(off)
	if p == nil {
		return nil, 0, InputErrorf(g.d.Path(), "corrupted DWARF: DIE offset %#x is in no part of the DWARF", off)
	}
	u, err := p.unitContaining(lo)
	if err != nil {
		var ie *InputError
		if asInputError(err, &ie) {
			return nil, 0, err
		}
		return nil, 0, InputErrorf(p.Path(), "corrupted DWARF: %v", err)
	}
	k := ctxKey{p, u.off}
	if x, ok := g.ctxs[k]; ok {
		return x, lo, nil
	}
	x, err := newUctx(p, u)
	if err != nil {
		return nil, 0, err
	}
	g.ctxs[k] = x
	return x, lo, nil
}

// newUctx reads a unit's abbreviations and its unit DIE (the string
// offsets base, the language).
func newUctx(p *Debug, u *unit) (*uctx, error) {
	sc := &scanner{d: p}
	if sl := p.foundTable.Load(); sl != nil && sl.key == (abbrevKey{u.abbrevOff, u.version, u.addrSize, u.offSize}) {
		sc.slots[0] = *sl
	}
	if err := sc.enterUnit(u); err != nil {
		return nil, InputErrorf(p.Path(), "corrupted DWARF: unit at %#x: %v", u.off, err)
	}
	x := &uctx{sc: sc, u: u, prefix: true}
	x.scoped = !cLanguage(sc.lang)
	return x, nil
}

// decodeAt decodes the type DIE at a combined offset.
func (g *Types) decodeAt(off uint64) (*pending, error) {
	x, lo, err := g.ctx(off)
	if err != nil {
		return nil, err
	}
	sc := x.sc
	sc.err = nil
	sc.c = newCursor(".debug_info", sc.d.info, lo, sc.d.order)
	sc.c.Limit(x.u.end)
	qual := ""
	if x.scoped && sc.qualifiedAt(lo) {
		// Only a kind whose name takes its scope asks for it: a pointer
		// far into the unit does not walk the unit's scopes that far.
		qual = x.scopeOf(lo)
	}
	pd, err := sc.decodeType(off, qual, g.count)
	if err != nil {
		return nil, dwarfErr(sc.d.Path(), err)
	}
	return pd, nil
}

// scopeOf is the scope of a named DIE of a C++ unit ("std", "a::b"),
// from a walk of the unit's namespaces and named types: a DIE's scopes
// all start before it, so a walk through the DIE knows its scope.
func (x *uctx) scopeOf(lo int) string {
	if x.scopes == nil {
		x.scopes = map[int]string{}
	}
	if lo >= x.scopesTo {
		x.walkScopes(lo)
	}
	return x.scopes[lo]
}

// walkScopes walks the unit's scopes through lo: with prefix through lo,
// or twice as far into the unit as the walk before if that is further,
// so that a lookup of a type near the unit's start reads only that far
// (libstdc++'s _IO_FILE, docs/benchmarks.md#a-lookup-reads-what-it-needs-2026-12-07)
// and the walks of many lookups read at most about twice the unit;
// without prefix the whole unit at once.
func (x *uctx) walkScopes(lo int) {
	stop := x.u.end
	if x.prefix {
		start := x.u.dieStart
		through := lo + 1
		if plantScopeStopShort {
			through = lo
		}
		stop = min(x.u.end, max(through, start+2*(x.scopesTo-start)))
	}
	ws := &scanner{d: x.sc.d}
	ws.lendAbbrevs(x.sc)
	x.scopesTo = walkNamedScopes(ws, x.u, stop, func(at int, s specScope) {
		if s.qual != "" {
			x.scopes[at] = s.qual
		}
	})
}

func asInputError(err error, target **InputError) bool {
	ie, ok := err.(*InputError)
	if ok {
		*target = ie
	}
	return ok
}
