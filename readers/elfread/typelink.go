package elfread

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/nrtabi/nrtabi/typemodel"
)

// batch is the nodes one link step adds, in the order they were decoded
// (so that interning, which keeps the first of equal nodes, gives the same
// graph on every run).
type batch struct {
	byOff map[uint64]*pending
	order []*pending
	fresh map[*typemodel.Type]bool // the batch's nodes, synthesized ones included; nil: every node met
}

func (b *batch) add(off uint64, pd *pending) {
	b.byOff[off] = pd
	b.order = append(b.order, pd)
	b.fresh[pd.t] = true
}

// link decodes the DIEs at roots and every type they reach that the graph
// lacks, then links, finishes and interns them into the graph; prefilled
// are nodes decoded already (AllTypes). Nothing enters the graph unless all
// of it links.
func (g *Types) link(roots []uint64, prefilled [][]*pending) error {
	b := &batch{byOff: map[uint64]*pending{}, fresh: map[*typemodel.Type]bool{}}
	var queue []uint64
	for _, list := range prefilled {
		for _, pd := range list {
			b.add(pd.t.Offset, pd)
		}
	}
	for _, pd := range b.order {
		queue = pd.refs(queue)
	}
	queue = append(queue, roots...)
	planted := plantSecondDecode
	for declared := 0; len(queue) > 0; {
		for len(queue) > 0 {
			off := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			if _, ok := g.lookup(off); ok {
				continue
			}
			if _, ok := b.byOff[off]; ok {
				continue
			}
			if err, ok := g.failed[off]; ok {
				return err
			}
			pd, err := g.decodeAt(off)
			if err != nil {
				return err
			}
			if planted {
				planted = false
				if _, err := g.decodeAt(off); err != nil {
					return err
				}
			}
			b.add(off, pd)
			queue = pd.refs(queue)
		}
		// A declared class stands for its definition elsewhere in the
		// input (typedecl.go), where the layout needs it: the definitions
		// of those the roots are or the batch reaches by value join the
		// batch. One reached only as a pointer's or reference's pointee
		// (or a function's parameter or result) is left as it is: its
		// spelling is its name and the pointer's size is the pointer's,
		// and finding a definition may take the whole input's index
		// (ScanAll), which the quick lookup must not pay for an opaque
		// struct (docs/layoutcheck.md#the-parallel-scan).
		if roots != nil {
			for _, off := range roots {
				if err := g.resolveValue(b, off, &queue); err != nil {
					return err
				}
			}
			roots = nil
		}
		for ; declared < len(b.order); declared++ {
			for _, off := range b.order[declared].valueRefs(nil) {
				if err := g.resolveValue(b, off, &queue); err != nil {
					return err
				}
			}
		}
	}
	get := func(r ref) *typemodel.Type {
		if !r.set {
			return g.void
		}
		off := r.off
		if def, ok := g.declOff[off]; ok {
			off = def
		}
		if t, ok := g.lookup(off); ok {
			return t
		}
		return b.byOff[off].t
	}
	for _, pd := range b.order {
		t := pd.t
		switch t.Kind {
		case typemodel.Enum:
			if pd.elem.set {
				t.Elem = get(pd.elem)
			}
		case typemodel.Struct, typemodel.Class, typemodel.Union, typemodel.Base, typemodel.Unspecified:
		case typemodel.Array:
			e := get(pd.elem)
			if len(pd.dims) > 0 {
				t.Count = pd.dims[0]
				for i := len(pd.dims) - 1; i >= 1; i-- {
					in := &typemodel.Type{Kind: typemodel.Array, Count: pd.dims[i], Elem: e}
					b.fresh[in] = true
					e = in
				}
			}
			t.Elem = e
		default:
			t.Elem = get(pd.elem)
			if t.Kind == typemodel.PtrToMember && pd.class.set {
				t.Class = get(pd.class)
			}
			if len(pd.params) > 0 {
				t.Params = make([]*typemodel.Type, len(pd.params))
				for i, r := range pd.params {
					t.Params[i] = get(r)
				}
			}
		}
		for i := range pd.fields {
			t.Fields[i].Type = get(pd.fields[i].typ)
		}
	}
	if err := g.chains(b); err != nil {
		return InputErrorf(g.d.Path(), "corrupted DWARF: %v", err)
	}
	for _, pd := range b.order {
		t := pd.t
		if t.Kind == typemodel.PtrToMember && !t.HasSize {
			t.Size, t.HasSize = 8, true
			if s := typemodel.Strip(t.Elem); s != nil && s.Kind == typemodel.Func {
				t.Size = 16
			}
		}
		for i := range pd.fields {
			finishField(&t.Fields[i], &pd.fields[i])
		}
	}
	// Interning: equal non-aggregate nodes become one; the aggregates'
	// fields and the offsets then point at the one kept.
	memo := map[*typemodel.Type]*typemodel.Type{}
	for _, pd := range b.order {
		t := pd.t
		for i := range t.Fields {
			t.Fields[i].Type = g.canon(t.Fields[i].Type, b, memo, 0)
		}
		if t.Kind == typemodel.Enum {
			t.Elem = g.canon(t.Elem, b, memo, 0)
		}
	}
	for _, pd := range b.order {
		g.nodes[pd.t.Offset] = g.canon(pd.t, b, memo, 0)
	}
	for t := range b.fresh {
		if c, ok := memo[t]; ok && c != t {
			delete(g.chain, t) // interned into another node
		}
	}
	return nil
}

// maxChain bounds a chain of derived types (typedef of pointer to array
// of ...) through their Elem links. Real chains are a few links; one of
// tens of thousands is crafted, and every walk of the model would stop
// short of its end (typemodel.MaxDepth). A loop is no chain: the walks end
// it at their bound, as they must for a struct holding a pointer to
// itself.
const maxChain = 20000

// chains measures the batch's chains of derived types, refusing one
// longer than maxChain. Each node is measured once (g.chain keeps the
// lengths of the graph's nodes for the next batch).
func (g *Types) chains(b *batch) error {
	if g.chain == nil {
		g.chain = map[*typemodel.Type]int{}
	}
	onPath := map[*typemodel.Type]bool{}
	var path []*typemodel.Type
	for _, pd := range b.order {
		path = path[:0]
		n := 0
		for t := pd.t; ; t = t.Elem {
			if t == nil || t.Kind.Aggregate() || t.Kind == typemodel.Enum || t.Kind == typemodel.Void || t.Kind == typemodel.Base || onPath[t] {
				break
			}
			if l, ok := g.chain[t]; ok {
				n = l
				break
			}
			onPath[t] = true
			path = append(path, t)
		}
		for i := len(path) - 1; i >= 0; i-- {
			n++
			g.chain[path[i]] = n
			delete(onPath, path[i])
			if n > maxChain {
				for _, t := range path[:i] {
					delete(onPath, t)
				}
				return fmt.Errorf("the type at DIE %#x nests more than %d types deep (through DIE %#x): refused, no real type does", pd.t.Offset, maxChain, path[i].Offset)
			}
		}
	}
	return nil
}

// resolveValue resolves the declaration at off, a type the batch needs
// the layout of, when it is one (in the batch or the graph already),
// queueing its definition.
func (g *Types) resolveValue(b *batch, off uint64, queue *[]uint64) error {
	var t *typemodel.Type
	if pd, ok := b.byOff[off]; ok {
		t = pd.t
	} else if gt, ok := g.lookup(off); ok {
		t = gt
	}
	if t == nil || t.Offset != off {
		return nil // not decoded (failed), or interned: never a declaration
	}
	def, ok, err := g.resolveDecl(context.TODO(), t)
	if err != nil {
		return err
	}
	if ok {
		*queue = append(*queue, def)
	}
	return nil
}

// valueRefs appends the offsets of the types whose layout a pending
// node's own needs: its members' and bases' types, an array's element,
// what a typedef, qualifier or enum names. A pointer's, reference's or
// pointer to member's pointee and class, and a function's result and
// parameters, are left out: their size is not the pointee's.
func (pd *pending) valueRefs(q []uint64) []uint64 {
	switch pd.t.Kind {
	case typemodel.Pointer, typemodel.Reference, typemodel.RvalueReference, typemodel.PtrToMember, typemodel.Func:
	default:
		if pd.elem.set {
			q = append(q, pd.elem.off)
		}
	}
	for i := range pd.fields {
		q = append(q, pd.fields[i].typ.off)
	}
	return q
}

// refs appends the offsets a pending node refers to.
func (pd *pending) refs(q []uint64) []uint64 {
	for _, r := range []ref{pd.elem, pd.class} {
		if r.set {
			q = append(q, r.off)
		}
	}
	for _, r := range pd.params {
		q = append(q, r.off)
	}
	for i := range pd.fields {
		q = append(q, pd.fields[i].typ.off)
	}
	return q
}

// finishField works out a member's position from what its DIE states:
// DW_AT_data_member_location, and for a bitfield DW_AT_data_bit_offset
// (DWARF 4 and 5) or DW_AT_bit_offset within a storage unit of
// DW_AT_byte_size bytes (DWARF 2 and 3).
func finishField(f *typemodel.Field, pf *pfield) {
	size := typemodel.SizeOf(f.Type)
	if f.Base {
		f.Name = typemodel.Spell(f.Type)
		if s := typemodel.Strip(f.Type); s != nil && s.Kind.Aggregate() && s.Name != "" {
			f.Name = s.Name
		}
		if pf.virtuality != 0 {
			f.Virtual = true
		}
	}
	if pf.locRuntime {
		f.Virtual = true
	}
	if pf.bitSize <= 0 {
		return
	}
	f.BitSize = pf.bitSize
	if pf.hasDataBitOff {
		f.BitOffset = pf.dbitOff
	} else {
		// The offset of the high bit within the storage unit at
		// DW_AT_data_member_location (little-endian: counted from the top).
		unit := pf.unitSize
		if unit <= 0 {
			unit = size
		}
		f.BitOffset = typemodel.SatAdd(typemodel.SatAdd(satMul8(f.Offset), satMul8(unit)), -typemodel.SatAdd(pf.bitOff, pf.bitSize))
	}
	if size > 0 && size <= typemodel.MaxSize/8 {
		f.Offset = f.BitOffset / (size * 8) * size
	} else {
		f.Offset = f.BitOffset / 8
	}
}

func satMul8(v int64) int64 {
	return min(max(v, -typemodel.MaxSize/8), typemodel.MaxSize/8) * 8
}

// internKey is what makes two non-aggregate nodes the same type. The
// fields are ordered so that the words and the bytes lie together without
// padding between them: the map's generated hash then reads them in one
// run beside the two strings, instead of one run per gap (a third less
// time per lookup; the graph's and every unit's interning hash a key per
// node).
type internKey struct {
	size, align, count                            int64
	elem, class                                   *typemodel.Type
	kind                                          typemodel.Kind
	enc                                           typemodel.Encoding
	hasSize, decl, variadic, prototyped, objParam bool
	name, params                                  string
}

// maxCanonDepth bounds the interning walk down a chain of new nodes; a
// deeper chain (crafted) is kept as it is, uninterned.
const maxCanonDepth = 4 * typemodel.MaxDepth

// canon is the graph's one node equal to t, t itself when it is the
// first; t's parts are made canonical first. Only the batch's nodes are
// touched: the graph's own are canonical already and may be read by other
// goroutines. memo holds what is done (nil: in progress); a nil memo is
// the nodes' own Kept (AllTypes' workers, each on its unit's nodes: a map
// keyed by node was their interning's largest cost), listed in g.memoed
// for the caller to clear.
func (g *Types) canon(t *typemodel.Type, b *batch, memo map[*typemodel.Type]*typemodel.Type, depth int) *typemodel.Type {
	if t == nil || b.fresh != nil && !b.fresh[t] || t.Kind.Aggregate() || t.Kind == typemodel.Enum || t.Kind == typemodel.Void {
		return t
	}
	var c *typemodel.Type
	var done bool
	if memo != nil {
		c, done = memo[t]
	} else if c = t.Kept; c != nil {
		done = true
		if c == inProgress {
			c = nil
		}
	}
	if done {
		if c == nil { // in progress: a loop of new nodes (crafted)
			return t
		}
		return c
	}
	if depth > maxCanonDepth {
		return t
	}
	g.memo(memo, t, nil)
	t.Elem = g.canon(t.Elem, b, memo, depth+1)
	t.Class = g.canon(t.Class, b, memo, depth+1)
	for i, p := range t.Params {
		t.Params[i] = g.canon(p, b, memo, depth+1)
	}
	k := keyOf(t)
	if c, ok := g.intern[k]; ok {
		g.memo(memo, t, c)
		return c
	}
	g.intern[k] = t
	g.memo(memo, t, t)
	if g.track {
		g.order = append(g.order, t)
	}
	return t
}

// inProgress marks in Kept a node canon is interning.
var inProgress = &typemodel.Type{}

// memo records canon's result for t (nil: in progress).
func (g *Types) memo(memo map[*typemodel.Type]*typemodel.Type, t, c *typemodel.Type) {
	if memo != nil {
		memo[t] = c
		return
	}
	if c == nil {
		c = inProgress
		g.memoed = append(g.memoed, t)
	}
	t.Kept = c
}

// keyOf is a node's interning key; its parts must be interned already.
// The parameters are keyed by identity, their nodes' addresses as bytes
// (Go's heap does not move a node, and the key lives no longer than the
// graph holding it); spelled with fmt's %p they were 1.4% of extract
// --all's CPU on libc's debug file.
func keyOf(t *typemodel.Type) internKey {
	return keyVia(t, nil)
}

// keyVia is keyOf with each part p taken as via(p) (nil: as it is).
func keyVia(t *typemodel.Type, via func(*typemodel.Type) *typemodel.Type) internKey {
	part := func(p *typemodel.Type) *typemodel.Type {
		if via == nil {
			return p
		}
		return via(p)
	}
	params := ""
	if len(t.Params) > 0 {
		var room [8 * 8]byte
		b := room[:0]
		for _, p := range t.Params {
			b = binary.LittleEndian.AppendUint64(b, uint64(uintptr(unsafe.Pointer(part(p)))))
		}
		params = string(b)
	}
	return internKey{kind: t.Kind, name: t.Name, size: t.Size, hasSize: t.HasSize, align: t.Align, enc: t.Encoding, decl: t.Declaration,
		elem: part(t.Elem), class: part(t.Class), count: t.Count, variadic: t.Variadic, prototyped: t.Prototyped, objParam: t.ObjectParam, params: params}
}
