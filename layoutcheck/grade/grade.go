package grade

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Finding is one fact about a pair of layouts.
type Finding struct {
	Kind     Kind
	Severity Severity
	// Struct is the struct that defines the changed member (the old side's
	// name); Field is the member's path below it ("" for the struct
	// itself).
	Struct string
	Field  string
	// Old and New say what each side has, for a reader ("u32 @40",
	// "88"); the numbers are in the offset and size members (-1: none).
	Old, New             string
	OldOffset, NewOffset int64
	OldSize, NewSize     int64
	Detail               string
	// OldType and NewType: the member's types, where the finding is about
	// one member of each side.
	OldType, NewType *Type
	// Moved: the members of the run, in layout order, the distance they
	// moved, and the member before the run in the new layout.
	Fields []string
	Delta  int64
	After  string
	// EmbeddedIn lists where Struct is embedded by value in the layouts
	// compared ("enc_glb_comm.comm.ring[0]": the first element stands for
	// every element of an array).
	EmbeddedIn []string
	// Consequences are what this fact forces elsewhere: the struct's size,
	// the members after it moving, the embedding members' sizes.
	Consequences []*Finding
}

// Path is Struct.Field.
func (f *Finding) Path() string {
	if f.Field == "" {
		return f.Struct
	}
	return f.Struct + "." + f.Field
}

// Worst is the most severe grade in the finding and its consequences.
func (f *Finding) Worst() Severity {
	w := f.Severity
	for _, c := range f.Consequences {
		w = max(w, c.Worst())
	}
	return w
}

// Walk calls fn on f and every consequence under it, depth first.
func (f *Finding) Walk(fn func(*Finding, int)) { f.walk(fn, 0) }

func (f *Finding) walk(fn func(*Finding, int), depth int) {
	fn(f, depth)
	for _, c := range f.Consequences {
		c.walk(fn, depth+1)
	}
}

// maxDepth bounds layouts nested by value and type comparisons (real ones
// nest a few levels; the input is untrusted).
const maxDepth = 16

type pair struct {
	facts []*Finding // the facts defined at this struct, top level
	size  *Finding   // the struct's size finding, wherever it is folded
	busy  bool
}

// Grader compares layouts and collects their facts once each. Layouts
// reached through several roots or embedding paths are compared once; the
// paths are recorded on their facts.
type Grader struct {
	pairs map[string]*pair
	facts []*Finding
}

// New returns an empty Grader.
func New() *Grader { return &Grader{pairs: map[string]*pair{}} }

// Facts are the top-level findings so far, each fact once, in the order
// they were found.
func (g *Grader) Facts() []*Finding { return g.facts }

// Grade compares a root layout pair and returns the facts defined at its
// struct (facts of structs embedded in it are in Facts, with the path).
func (g *Grader) Grade(old, new *Layout) []*Finding {
	p := g.pair(old, new, "", 0)
	if p == nil {
		return nil
	}
	return p.facts
}

func pairKey(old, new *Layout) string { return old.Key + "\x00" + new.Key }

// pair compares old and new once; at records where they are embedded.
func (g *Grader) pair(old, new *Layout, at string, depth int) *pair {
	k := pairKey(old, new)
	if p, ok := g.pairs[k]; ok {
		if at != "" && !p.busy {
			for _, f := range p.facts {
				if !slices.Contains(f.EmbeddedIn, at) {
					f.EmbeddedIn = append(f.EmbeddedIn, at)
				}
			}
		}
		return p
	}
	p := &pair{busy: true}
	g.pairs[k] = p
	c := &comparer{g: g, old: old, new: new, depth: depth}
	p.facts, p.size = c.run()
	p.busy = false
	for _, f := range p.facts {
		if at != "" {
			f.EmbeddedIn = append(f.EmbeddedIn, at)
		}
	}
	g.facts = append(g.facts, p.facts...)
	return p
}

// comparer grades one pair of layouts.
type comparer struct {
	g        *Grader
	old, new *Layout
	depth    int
	// local are this struct's findings before folding; causes are the
	// ones that move what follows them (by their offset in the new layout).
	local []*Finding
	moves []move
	// causeOf maps a local resized finding to the inner size finding that
	// is its cause.
	causeOf map[*Finding]*Finding
}

type move struct {
	name     string
	old, new int64
}

func (c *comparer) add(k Kind, sev Severity, field, old, new, detail string) *Finding {
	f := &Finding{Kind: k, Severity: sev, Struct: c.old.Name, Field: field, Old: old, New: new, Detail: detail,
		OldOffset: -1, NewOffset: -1, OldSize: -1, NewSize: -1}
	c.local = append(c.local, f)
	return f
}

func isAnon(s string) bool { return strings.HasPrefix(s, "<anonymous@") }

func (c *comparer) run() ([]*Finding, *Finding) {
	old, new := c.old, c.new
	var size *Finding
	switch {
	case old.Prefix && new.Prefix:
		if old.Size != new.Size {
			size = c.add(Size, Info, "", fmt.Sprint(old.Size), fmt.Sprint(new.Size), "only a prefix is modelled")
		}
	case old.Prefix && new.Size < old.Size:
		size = c.add(Size, Incompatible, "", fmt.Sprintf(">= %d", old.Size), fmt.Sprint(new.Size), fmt.Sprintf("%d B, but the first %d B are modelled (struct shrunk)", new.Size, old.Size))
	case !old.Prefix && old.Size != new.Size:
		verb := "grew"
		if new.Size < old.Size {
			verb = "shrunk"
		}
		size = c.add(Size, Incompatible, "", fmt.Sprint(old.Size), fmt.Sprint(new.Size), "struct "+verb)
	}
	if size != nil {
		size.OldSize, size.NewSize = old.Size, new.Size
	}

	byName := map[string]*Member{}
	holder := map[*Member]*Member{}
	for i := range new.Members {
		if m := &new.Members[i]; m.Name != "" {
			byName[m.Name] = m
		}
	}
	for i := range new.Members {
		h := &new.Members[i]
		if h.Name != "" {
			continue
		}
		for j := range h.Group {
			in := &h.Group[j]
			if _, ok := byName[in.Name]; !ok && in.Name != "" {
				byName[in.Name], holder[in] = in, h
			}
		}
	}
	oldNames := map[string]bool{}
	for _, f := range old.Members {
		oldNames[f.Name] = true
	}
	used := map[*Member]bool{}
	usedRange := map[*Range]bool{}
	for i := range old.Members {
		f := &old.Members[i]
		m := byName[f.Name]
		if m == nil {
			c.unmatched(f, oldNames, used, usedRange)
			continue
		}
		used[m] = true
		if h := holder[m]; h != nil {
			used[h] = true
			// A member found in an anonymous union or struct is that member
			// (C11 6.7.2.1p13): wrapping it, beside anything else, moves no
			// byte of it (the anonymous-union false positive of other tools).
		}
		c.member(f, m)
	}
	c.added(used, usedRange)
	for _, r := range old.Opaque {
		if r.End > new.Size && !old.Prefix {
			f := c.add(OpaqueBounds, Incompatible, "", fmt.Sprintf("%d..%d", r.Off, r.End), fmt.Sprint(new.Size),
				fmt.Sprintf("the opaque range %d..%d runs past the struct's %d B", r.Off, r.End, new.Size))
			f.OldOffset, f.NewSize = r.Off, new.Size
		}
	}
	return c.fold(size), size
}

// unmatched grades an old member the new layout has no member of that
// name for.
func (c *comparer) unmatched(f *Member, oldNames map[string]bool, used map[*Member]bool, usedRange map[*Range]bool) {
	new := c.new
	// Renamed: a member the old layout does not name, at the same offset,
	// of the same type.
	for i := range new.Members {
		m := &new.Members[i]
		if used[m] || m.Name == "" || m.BitSize > 0 || oldNames[m.Name] || m.Filler {
			continue
		}
		if m.Offset == f.Offset && m.Size == f.Size && sameType(f.Type, m.Type) {
			used[m] = true
			r := c.add(Renamed, Compatible, f.Name, f.Name, m.Name, fmt.Sprintf("same %s at %d", f.Type.Show(), f.Offset))
			r.OldOffset, r.NewOffset, r.OldSize, r.NewSize = f.Offset, m.Offset, f.Size, m.Size
			r.OldType, r.NewType = f.Type, m.Type
			return
		}
	}
	// An anonymous member of exactly its bytes holding a member of its type
	// under another name.
	for i := range new.Members {
		h := &new.Members[i]
		if h.Name != "" || used[h] || h.Offset != f.Offset || h.Size != f.Size {
			continue
		}
		for _, in := range h.Group {
			if in.Offset == f.Offset && in.Size == f.Size && sameType(f.Type, in.Type) {
				used[h] = true
				r := c.add(Renamed, Compatible, f.Name, f.Name, "<anonymous>."+in.Name, fmt.Sprintf("same %s at %d, in an anonymous member of its size", f.Type.Show(), f.Offset))
				r.OldOffset, r.NewOffset, r.OldSize, r.NewSize = f.Offset, in.Offset, f.Size, in.Size
				r.OldType, r.NewType = f.Type, in.Type
				return
			}
		}
	}
	// The new side's opaque ranges (a spec side: extract writes a bitfield
	// or an anonymous union as a range covering it). A range naming the
	// member holds it wherever it now is; otherwise the range must hold its
	// old bytes.
	r := new.opaqueHolding(f.Offset, f.End())
	for i := range new.Opaque {
		if slices.Contains(new.Opaque[i].Covers, f.Name) {
			r = &new.Opaque[i]
		}
	}
	if r != nil {
		switch {
		case len(r.Covers) == 1 && r.Covers[0] == f.Name && r.End-r.Off == f.Size:
			// The member alone, of its size: a type the spec grammar cannot
			// spell (a float, a union), as a DWARF side would see a retype.
			usedRange[r] = true
			x := c.add(Retyped, Incompatible, f.Name, f.Type.Show(), fmt.Sprintf("opaque %d..%d", r.Off, r.End), "now of a type a spec cannot spell (nrtabi extract left it opaque)")
			x.OldOffset, x.NewOffset, x.OldSize, x.NewSize = f.Offset, r.Off, f.Size, r.End-r.Off
			if r.Off != f.Offset {
				c.moves = append(c.moves, move{f.Name, f.Offset, r.Off})
			}
		case slices.Contains(r.Covers, f.Name):
			usedRange[r] = true
			x := c.add(Bitfield, Incompatible, f.Name, fmt.Sprintf("%s @%d", f.Type.Show(), f.Offset), fmt.Sprintf("in the bitfield or overlapping members %d..%d (%s)", r.Off, r.End, strings.Join(r.Covers, ", ")),
				"now a bitfield or overlapped by another member")
			x.OldOffset, x.OldSize = f.Offset, f.Size
		case r.Off == f.Offset && r.End == f.End() && len(r.Covers) == 1 && isAnon(r.Covers[0]):
			usedRange[r] = true
			// The side is a spec, whose grammar has no unions: the range
			// says the member's bytes are kept, not what the union holds.
			c.add(UnionWrap, Info, f.Name, f.Type.Show(), r.Covers[0], "now in an anonymous member of the same size at the same offset; a spec cannot spell what it holds")
		case len(r.Covers) == 0:
			usedRange[r] = true
			x := c.add(Undescribed, Info, f.Name, fmt.Sprintf("%s @%d", f.Type.Show(), f.Offset), "opaque", "the bytes are kept, no longer described")
			x.OldOffset, x.OldSize = f.Offset, f.Size
		default:
			// Gone; what now holds its bytes is graded as a new member
			// (laid over it), as a DWARF side's would be.
			x := c.add(Removed, Incompatible, f.Name, fmt.Sprintf("%s @%d", f.Type.Show(), f.Offset), "",
				fmt.Sprintf("its bytes are now held by %s", strings.Join(r.Covers, ", ")))
			x.OldOffset, x.OldSize = f.Offset, f.Size
		}
		return
	}
	x := c.add(Removed, Incompatible, f.Name, fmt.Sprintf("%s @%d", f.Type.Show(), f.Offset), "",
		fmt.Sprintf("no member of that name, and none of the same offset, size and type (%s at %d, %d B)", f.Type.Canon, f.Offset, f.Size))
	x.OldOffset, x.OldSize = f.Offset, f.Size
}

// added grades the new members the old layout does not know.
func (c *comparer) added(used map[*Member]bool, usedRange map[*Range]bool) {
	old, new := c.old, c.new
	type piece struct {
		label      string
		start, end int64
		typ        string
	}
	var ps []piece
	for i := range new.Members {
		m := &new.Members[i]
		if used[m] || m.Filler || m.End() <= m.start() {
			continue
		}
		label := m.Name
		if label == "" {
			label = fmt.Sprintf("<anonymous@%d>", m.Offset)
		}
		t := ""
		if m.Type != nil {
			t = m.Type.Show()
		}
		if m.BitSize > 0 {
			t = fmt.Sprintf("%d-bit field", m.BitSize)
		}
		ps = append(ps, piece{label, m.start(), m.End(), t})
	}
	for i := range new.Opaque {
		r := &new.Opaque[i]
		if usedRange[r] || len(r.Covers) == 0 || old.opaqueHolding(r.Off, r.End) != nil && coveredAll(old.opaqueHolding(r.Off, r.End), r.Covers) {
			continue
		}
		known := false
		for _, f := range old.Members {
			if f.Offset >= r.Off && f.End() <= r.End && slices.Contains(r.Covers, f.Name) {
				known = true // graded with the old member
			}
		}
		if !known {
			ps = append(ps, piece{strings.Join(r.Covers, ", "), r.Off, r.End, "opaque"})
		}
	}
	for _, p := range ps {
		what := fmt.Sprintf("%s @%d", p.typ, p.start)
		if c.inBitfield(p.start, p.end) {
			continue // the rest of the storage an old member's bitfield now shares: part of that fact
		}
		if old.Prefix && p.start >= old.Size {
			continue // beyond the modelled prefix: not the spec's business
		}
		var f *Finding
		if o := old.opaqueHolding(p.start, p.end); o != nil {
			if slices.Contains(o.Covers, p.label) {
				continue // the old side named it already
			}
			f = c.add(AddedOpaque, Compatible, p.label, fmt.Sprintf("opaque %d..%d", o.Off, o.End), what, "inside a range the old side left opaque")
		} else if over, kept := c.overlaps(p.start, p.end); over != "" && !kept {
			f = c.add(LaidOver, Incompatible, p.label, over, what, "an unknown member laid over the bytes of "+over)
		} else if over != "" {
			f = c.add(Added, Incompatible, p.label, "", what, "inserted where "+over+" was")
		} else if p.end <= old.Size {
			f = c.add(AddedPadding, Compatible, p.label, "padding", what, "in bytes no old member held")
		} else {
			f = c.add(Added, Incompatible, p.label, "", what, "beyond the old end")
		}
		f.NewOffset, f.NewSize = p.start, p.end-p.start
	}
}

func coveredAll(r *Range, names []string) bool {
	for _, n := range names {
		if !slices.Contains(r.Covers, n) {
			return false
		}
	}
	return true
}

// inBitfield reports whether [start, end) lies within the old bytes of a
// member graded as now a bitfield.
func (c *comparer) inBitfield(start, end int64) bool {
	for _, f := range c.local {
		if f.Kind == Bitfield && f.OldOffset >= 0 && start >= f.OldOffset && end <= f.OldOffset+f.OldSize {
			return true
		}
	}
	return false
}

// overlaps names the old member whose bytes [start, end) overlap, and
// whether the new layout still has it (moved: the new member is an
// insertion; gone: it took the old member's place).
func (c *comparer) overlaps(start, end int64) (string, bool) {
	for _, f := range c.old.Members {
		if start < f.End() && f.Offset < end {
			for _, r := range c.new.Opaque {
				if slices.Contains(r.Covers, f.Name) {
					return f.Name, true
				}
			}
			for _, m := range c.new.Members {
				if m.Name == f.Name {
					return f.Name, true
				}
				for _, in := range m.Group {
					if in.Name == f.Name {
						return f.Name, true
					}
				}
			}
			return f.Name, false
		}
	}
	return "", false
}

// member grades an old member against the new member of its name.
func (c *comparer) member(f, m *Member) {
	if m.BitSize > 0 && f.BitSize == 0 {
		x := c.add(Bitfield, Incompatible, f.Name, fmt.Sprintf("%s @%d", f.Type.Show(), f.Offset), fmt.Sprintf("%d-bit bitfield at bit %d", m.BitSize, m.BitOffset), "now a bitfield")
		x.OldOffset, x.OldSize, x.OldType = f.Offset, f.Size, f.Type
		return
	}
	if m.Offset != f.Offset {
		c.moves = append(c.moves, move{f.Name, f.Offset, m.Offset})
	}
	if sameType(f.Type, m.Type) {
		c.embedded(f, m)
		return
	}
	if f.Size != m.Size {
		x := c.add(Resized, Incompatible, f.Name, fmt.Sprintf("%s (%d B)", f.Type.Show(), f.Size), fmt.Sprintf("%s (%d B)", m.Type.Show(), m.Size), "")
		x.OldOffset, x.NewOffset, x.OldSize, x.NewSize = f.Offset, m.Offset, f.Size, m.Size
		x.OldType, x.NewType = f.Type, m.Type
		return
	}
	kind, detail, inner := c.retype(f, m)
	sev := Compatible
	if kind == Retyped {
		sev = Incompatible
	}
	x := c.add(kind, sev, f.Name, f.Type.Show(), m.Type.Show(), detail)
	x.OldOffset, x.NewOffset, x.OldSize, x.NewSize = f.Offset, m.Offset, f.Size, m.Size
	x.OldType, x.NewType = f.Type, m.Type
	// What the renamed type holds differently (a member found in its
	// opaque range) is said at this member's path: the old type's name is
	// not the new one's.
	for _, in := range inner {
		in.Walk(func(y *Finding, _ int) {
			if y.Struct != c.old.Name || !strings.HasPrefix(y.Field, f.Name+".") {
				y.Field = strings.TrimPrefix(f.Name+"."+y.Field, ".")
				if y.Field == f.Name+"." {
					y.Field = f.Name
				}
				y.Struct = c.old.Name
			}
		})
	}
	x.Consequences = append(x.Consequences, inner...)
}

// embedded compares a member of the same type on both sides: a struct (or
// an array of them) is compared as a pair of its own, and a size change
// is folded under that pair's size finding.
func (c *comparer) embedded(f, m *Member) {
	ft, mt, at := f.Type, m.Type, f.Name
	for ft.Kind == TArray && mt.Kind == TArray && ft.Elem != nil && mt.Elem != nil {
		ft, mt, at = ft.Elem, mt.Elem, at+"[0]"
	}
	var inner *pair
	if ft.Kind == TStruct && mt.Kind == TStruct && ft.Struct != nil && mt.Struct != nil && c.depth < maxDepth {
		ol, err1 := ft.Struct()
		nl, err2 := mt.Struct()
		switch {
		case err1 != nil || err2 != nil:
			x := c.add(Retyped, Incompatible, f.Name, f.Type.Canon, "", fmt.Sprintf("cannot read the embedded struct: %v", firstErr(err1, err2)))
			x.OldOffset = f.Offset
			return
		default:
			inner = c.g.pair(ol, nl, c.old.Name+"."+at, c.depth+1)
		}
	}
	if f.Size != m.Size {
		x := &Finding{Kind: Resized, Severity: Incompatible, Struct: c.old.Name, Field: f.Name,
			Old: fmt.Sprintf("%s (%d B)", f.Type.Canon, f.Size), New: fmt.Sprintf("%s (%d B)", m.Type.Canon, m.Size),
			OldOffset: f.Offset, NewOffset: m.Offset, OldSize: f.Size, NewSize: m.Size, OldType: f.Type, NewType: m.Type}
		c.local = append(c.local, x)
		if inner != nil && inner.size != nil {
			if c.causeOf == nil {
				c.causeOf = map[*Finding]*Finding{}
			}
			c.causeOf[x] = inner.size
		}
	}
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// retype grades a member whose type changed and whose size did not.
func (c *comparer) retype(f, m *Member) (Kind, string, []*Finding) {
	a, b := f.Type, m.Type
	if a.Kind == TArray && b.Kind == TArray && a.Len < 0 && b.Len < 0 {
		if f.Offset == m.Offset && c.old.Size == c.new.Size && c.old.Align == c.new.Align {
			return FlexElem, fmt.Sprintf("same offset %d; the struct's size and %d-byte alignment are unchanged", m.Offset, c.new.Align), nil
		}
		return Retyped, fmt.Sprintf("the flexible array changes the struct's alignment from %d to %d bytes", c.old.Align, c.new.Align), nil
	}
	if a.Kind == TPointer && b.Kind == TPointer && (a.Elem.Undescribed() || b.Elem.Undescribed()) {
		return PointerTarget, "a pointer of the same size; neither side describes what the old pointee held, so no byte either reads moves", nil
	}
	if inner, ok := c.sameLayout(a, b, 0); ok {
		detail := fmt.Sprintf("identical layout: %d B, same members at the same offsets", m.Size)
		if a.Kind == TPointer {
			detail = "the pointee's layout is identical"
		}
		return TypeRenamed, detail, inner
	}
	return Retyped, "", nil
}

// sameType reports whether two types are the same for grading.
func sameType(a, b *Type) bool {
	return a != nil && b != nil && a.Canon == b.Canon && a.Canon != ""
}

// sameLayout reports whether two types lay out identically although their
// names differ: structs member by member (renamed members allowed, new ones
// only where the old one was opaque), arrays and pointers by their
// elements. It returns the compatible findings inside, to fold under the
// rename.
func (c *comparer) sameLayout(a, b *Type, depth int) ([]*Finding, bool) {
	if a == nil || b == nil || depth+c.depth > maxDepth || a.Kind != b.Kind || a.Size != b.Size || a.Align != b.Align && a.Kind != TPointer {
		return nil, false
	}
	if sameType(a, b) {
		return nil, true
	}
	switch a.Kind {
	case TArray:
		if a.Len != b.Len {
			return nil, false
		}
		return c.sameLayout(a.Elem, b.Elem, depth+1)
	case TPointer:
		_, ok := c.sameLayout(a.Elem, b.Elem, depth+1)
		return nil, ok // what the pointee holds is not in these bytes
	case TStruct:
		if a.Struct == nil || b.Struct == nil {
			return nil, false
		}
		ol, err1 := a.Struct()
		nl, err2 := b.Struct()
		if err1 != nil || err2 != nil || ol.Size != nl.Size || ol.Packed != nl.Packed {
			return nil, false
		}
		if p, ok := c.g.pairs[pairKey(ol, nl)]; ok && p.busy {
			return nil, true // already being compared further up: the outer comparison decides
		}
		// A grader of its own, so the facts inside stay under the rename;
		// the pairs being compared further up stay marked, so a layout that
		// refers to itself ends.
		sub := New()
		for k, p := range c.g.pairs {
			if p.busy {
				sub.pairs[k] = p
			}
		}
		sub.pairs[pairKey(ol, nl)] = &pair{busy: true}
		cc := &comparer{g: sub, old: ol, new: nl, depth: c.depth + depth + 1}
		facts, _ := cc.run()
		var out []*Finding
		ok := true
		for _, f := range facts {
			f.Walk(func(x *Finding, _ int) {
				if x.Severity == Incompatible || x.Kind == AddedPadding || x.Kind == Added || x.Kind == LaidOver || x.Kind == Undescribed {
					ok = false
				}
			})
			out = append(out, f)
		}
		return out, ok
	}
	return nil, false
}

// fold turns the local findings into this struct's facts: moved members
// become runs, and the size, the runs and the resized embedding members
// are folded under their cause.
func (c *comparer) fold(size *Finding) []*Finding {
	runs := c.runs()
	offsetOf := func(f *Finding) int64 {
		if f.NewOffset >= 0 {
			return f.NewOffset
		}
		return f.OldOffset
	}
	isCause := func(f *Finding) bool {
		switch f.Kind {
		case Resized, Added, Removed, LaidOver:
			return true
		}
		return false
	}
	var top []*Finding
	var causes []*Finding
	for _, f := range c.local {
		if f == size {
			continue
		}
		if inner, ok := c.causeOf[f]; ok {
			inner.Consequences = append(inner.Consequences, f)
			causes = append(causes, f)
			continue
		}
		if isCause(f) {
			causes = append(causes, f)
		}
		top = append(top, f)
	}
	sort.SliceStable(causes, func(i, j int) bool { return offsetOf(causes[i]) < offsetOf(causes[j]) })
	// growth is how far a cause pushes what follows it. A run or the size
	// is folded under the last cause before it only when the causes before
	// it push the same way: a run moved -48 after a field that grew by 4
	// has another cause (an opaque range the spec sizes differently, say)
	// and is a fact of its own.
	growth := func(f *Finding) int64 {
		switch f.Kind {
		case Resized:
			return f.NewSize - f.OldSize
		case Added, LaidOver:
			return max(f.NewSize, 0)
		case Removed:
			return -max(f.OldSize, 0)
		}
		return 0
	}
	sign := func(v int64) int64 { return min(max(v, -1), 1) }
	for _, r := range runs {
		var cause *Finding
		var pushed int64
		for _, k := range causes {
			if offsetOf(k) < r.NewOffset || offsetOf(k) < r.OldOffset {
				cause, pushed = k, pushed+growth(k)
			}
		}
		if cause != nil && pushed != 0 && sign(pushed) == sign(r.Delta) {
			cause.Consequences = append(cause.Consequences, r)
			continue
		}
		top = append(top, r)
	}
	if size != nil {
		var pushed int64
		for _, k := range causes {
			pushed += growth(k)
		}
		if len(causes) > 0 && pushed != 0 && sign(pushed) == sign(size.NewSize-size.OldSize) {
			k := causes[len(causes)-1]
			k.Consequences = append([]*Finding{size}, k.Consequences...)
		} else {
			top = append([]*Finding{size}, top...)
		}
	}
	return top
}

// runs groups the moved members: consecutive members (in the new layout)
// moved by the same delta are one finding.
func (c *comparer) runs() []*Finding {
	if len(c.moves) == 0 {
		return nil
	}
	ms := slices.Clone(c.moves)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].new < ms[j].new })
	// A run ends at a member that did not move: the offsets of those, in
	// order, so each gap between two moved members is one search.
	moved := map[int64]bool{}
	for _, m := range ms {
		moved[m.new] = true
	}
	var still []int64
	for _, m := range c.new.Members {
		if !moved[m.Offset] {
			still = append(still, m.Offset)
		}
	}
	slices.Sort(still)
	between := func(a, b int64) bool {
		i := sort.Search(len(still), func(i int) bool { return still[i] > a })
		return i < len(still) && still[i] < b
	}
	var out []*Finding
	for i := 0; i < len(ms); {
		d := ms[i].new - ms[i].old
		j := i + 1
		for j < len(ms) && ms[j].new-ms[j].old == d && !between(ms[j-1].new, ms[j].new) {
			j++
		}
		f := &Finding{Kind: Moved, Severity: Incompatible, Struct: c.old.Name, Delta: d,
			OldOffset: ms[i].old, NewOffset: ms[i].new, OldSize: -1, NewSize: -1}
		for _, m := range ms[i:j] {
			f.Fields = append(f.Fields, m.name)
		}
		f.Field = f.Fields[0]
		f.Old, f.New = fmt.Sprint(ms[i].old), fmt.Sprint(ms[i].new)
		f.After = c.before(ms[i].new)
		if len(f.Fields) > 1 {
			f.Field = f.Fields[0] + " .. " + f.Fields[len(f.Fields)-1]
			where := "at the start"
			if f.After != "" {
				where = "after `" + f.After + "`"
			}
			f.Detail = fmt.Sprintf("%d fields %s moved %+d", len(f.Fields), where, d)
		}
		out = append(out, f)
		i = j
	}
	return out
}

// before names the new member laid out just before offset off.
func (c *comparer) before(off int64) string {
	name, at := "", int64(-1)
	for _, m := range c.new.Members {
		if m.Offset < off && m.Offset > at && m.Name != "" {
			name, at = m.Name, m.Offset
		}
	}
	return name
}
