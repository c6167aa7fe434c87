package release

import (
	"bufio"
	"bytes"
	"context"
	"debug/dwarf"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// allChunk is how many structs a worker of extractAll reads at a time,
// written as one piece of text.
const allChunk = 32

// allWindow bounds, per worker, how many chunks may be read ahead of the
// one being written: the text waiting to be written is bounded by it, not
// by the input.
const allWindow = 4

// extractAll writes the fragment of every named definition of the DWARF
// (ExtractOptions.All) to w (docs/nrtabi-extract.md#every-type---all):
//
//  1. elfread.ScanAllTypes indexes the named definitions in unit order
//     and decodes every unit's structs, unions and enums, and the types
//     they reach, into the one graph, on opt.Jobs workers, one pass over
//     the units;
//  2. serially, each struct of the index gets its row name (or is left
//     out, counted) and each enum its row: from here on the set of rows is
//     fixed, so a member naming another struct needs nothing of that
//     struct but its name;
//  3. the structs are read on opt.Jobs workers, a chunk of allChunk at a
//     time, every worker reading the one graph, and the chunks are
//     written in index order as they complete.
//
// The text is the same for every opt.Jobs. Nothing is written before step
// 3, so an input error leaves w untouched.
func extractAll(ctx context.Context, obj *elfread.File, dbg *elfread.Debug, opt ExtractOptions, w io.Writer) error {
	jobs := opt.Jobs
	if jobs == 0 {
		jobs = elfread.DefaultJobs()
	}
	start := time.Now()
	idx, _, err := dbg.ScanAllTypes(ctx, jobs)
	if err != nil {
		return err
	}
	st := opt.Stats
	if st == nil {
		st = &ExtractStats{}
	}
	st.ScanTime = time.Since(start)
	start = time.Now()
	st.Units, st.InfoBytes, st.Types = idx.Units, idx.InfoBytes, len(idx.Types)
	x := newExtractor(obj, dbg, opt.Spec)
	var skip skips
	// Definitions under their own names first, then the other names
	// typedefs give them: a row is named as its DWARF names the struct,
	// which is how a pointer to it is spelled.
	var defs, aliases []*elfread.Named
	for _, t := range idx.Types {
		if t.Alias {
			aliases = append(aliases, t)
		} else {
			defs = append(defs, t)
		}
	}
	conflicts, err := x.odrConflicts(ctx, idx, jobs)
	if err != nil {
		return err
	}
	skip.add(idx.Duplicates-conflicts.copies, "later definitions of a name an earlier unit already defines (the first, in unit order, is extracted; a C++ header's types are defined once per unit that includes it)")
	skip.add(idx.Anonymous, "anonymous structs, unions and enums no typedef names (their members are covered where they are used)")
	skip.add(idx.Nested, "structs, unions and enums defined inside a struct or class (check looks a struct up at namespace scope only)")
	// Step 2: no row takes a name (or the tag a _t name implies) an earlier
	// row has, or the loader would refuse the fragment.
	taken := map[string]bool{}
	var structs []*xStruct
	var enums []*elfread.Named
	var refused []string
	clashes := 0
	enumAt := map[dwarf.Offset]bool{}
	for _, t := range append(defs, aliases...) {
		if t.Kind == "enum" {
			// A typedef of an enum is another name of its one row.
			if !enumAt[t.Offset] {
				enumAt[t.Offset] = true
				enums = append(enums, t)
			}
			continue
		}
		if _, ok := x.byOff[t.Offset]; ok {
			continue // another name (a typedef) of a struct that has its row
		}
		if t.Alias {
			// A typedef of a copy of a struct another unit's copy gave its
			// row under its own name (ODR: struct _IO_FILE in every unit
			// that includes stdio.h, typedef'd __FILE in one): the same C
			// type, so the same row, and a member pointing at this copy is
			// spelled with that row's name, which check then matches by
			// name instead of grading a renamed type.
			if s := x.odrRow(idx, t); s != nil {
				x.byOff[t.Offset] = s
				continue
			}
		}
		name := t.Name
		if opt.Spec != nil {
			if s := opt.Spec.StructByName(name); s != nil {
				name = s.Name
			}
		}
		why := rowNameProblem(name)
		if c, ok := conflicts.byName[t.Name]; ok && !t.Alias && t.Kind != "enum" {
			why = c
		}
		if why != "" {
			// Refused by name, as a struct without a layout is: a member
			// using it is an opaque range, so the fragment still checks
			// clean against the object.
			s := x.reserve(t.Offset, name)
			s.refused, s.rowless = t.Kind+" "+why, true
			refused = append(refused, esc.String(t.Name+" ("+s.refused+")"))
			continue
		}
		keys := []string{name, strings.TrimSuffix(name, "_t")}
		if !strings.HasPrefix(t.Via, "typedef ") && t.Name != name {
			keys = append(keys, t.Name)
		}
		if taken[keys[0]] || taken[keys[1]] || len(keys) > 2 && taken[keys[2]] {
			clashes++
			continue
		}
		for _, k := range keys {
			taken[k] = true
		}
		s := x.reserve(t.Offset, name)
		// What structAt would refuse, known from the scan: a member of
		// another struct must not name a struct that gets no row.
		switch {
		case !t.Sized:
			s.refused = fmt.Sprintf("%s %s has no size in this DWARF (an incomplete or variable-size type)", t.Kind, t.Name)
		case t.Size == 0:
			s.refused = fmt.Sprintf("%s %s is empty (0 bytes: a GNU C struct {}, a Rust zero-sized type); a spec struct has at least one byte", t.Kind, t.Name)
		case t.Size > spec.MaxObjectSize:
			s.refused = fmt.Sprintf("%s %s is %d bytes; a spec struct has at most %d", t.Kind, t.Name, t.Size, spec.MaxObjectSize)
		}
		if s.refused != "" {
			s.rowless = true
			refused = append(refused, esc.String(t.Name+" ("+s.refused+")"))
			continue
		}
		s.size = t.Size
		structs = append(structs, s)
	}
	skip.add(clashes, "structs whose name or tag another struct's row already has (struct foo beside typedef struct {...} foo_t): a spec names a struct once")
	skip.add(len(refused), "structs without a layout a spec struct can hold, with a name no row can carry, or that units define differently (ODR conflicts), each named in a not-extracted comment")
	x.closed = true
	// Every enum gets a row when the spec can state it, used or not.
	unstated := 0
	for _, t := range enums {
		if err := ctx.Err(); err != nil {
			return err
		}
		et, err := nodeOf(x.g, idx, t)
		if err != nil {
			return wrapInput(dbg.Path(), err, "enum %s", t.Name)
		}
		if name, _, _ := x.enumType(et, []string{t.Name}); x.enums[name] == nil {
			unstated++
		}
	}
	x.enumsClosed = true
	skip.add(unstated, "enums the spec cannot state (a name that is no C identifier, as a C++ scoped name; an enumerator another enum declares; a size other than 1, 2, 4 or 8), spelled as the integer of their size where a member uses them")
	if len(structs) == 0 && len(x.enumOrder) == 0 {
		return elfread.InputErrorf(dbg.Path(), "nothing to extract: the DWARF defines no named struct, union or enum a spec can hold (%s)", strings.Join(skip.lines, "; "))
	}
	st.NameTime = time.Since(start)
	start = time.Now()
	// Step 3.
	bw := bufio.NewWriterSize(w, 1<<16)
	sw := &spec.Writer{W: bw}
	io.WriteString(bw, x.header(obj.Path, obj.BuildID, dbg))
	for _, l := range skip.lines {
		sw.Comment("skipped: " + l)
	}
	for _, n := range refused {
		sw.Comment("not extracted: " + n)
	}
	for _, e := range x.enumRows() {
		sw.Enum(e)
	}
	chunks, err := x.readAll(ctx, dbg, structs, jobs, bw)
	if err != nil {
		return err
	}
	// The structs pointed to that have no row: known once every struct is
	// read, so they follow the structs (a TOML file's tables may come in
	// any order).
	var unread, dropped []string
	for _, c := range chunks {
		for n := range c.opaques {
			x.opaques[n] = true
		}
		unread = append(unread, c.unread...)
		dropped = append(dropped, c.dropped...)
	}
	var late skips
	if len(unread) > 0 {
		late.add(len(unread)-len(dropped), "structs whose members cannot be read, each one opaque range of its DWARF size (a member names it); the first: "+unread[0])
		late.add(len(dropped), "structs whose members cannot be read and that no member names, each named in a not-extracted comment")
	}
	for _, l := range late.lines {
		sw.Comment("skipped: " + l)
	}
	for _, n := range dropped {
		sw.Comment("not extracted: " + n)
	}
	for _, o := range x.opaqueRows() {
		sw.OpaqueType(o)
	}
	if err := sw.Err(); err != nil {
		return fmt.Errorf("writing the fragment of %s: %w", obj.Path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the fragment of %s: %w", obj.Path, err)
	}
	st.Structs, st.Enums = len(structs)-len(dropped), len(x.enumOrder)
	st.ReadTime = time.Since(start)
	st.Skipped = append(skip.lines, late.lines...)
	return nil
}

// chunk is one piece of extractAll's step 3: structs[from:to], read by one
// worker into text.
type chunk struct {
	from, to int
	done     chan struct{}
	text     []byte
	buf      *bytes.Buffer // text's buffer, back to chunkBufs once written
	opaques  map[string]bool
	unread   []string // every struct whose members cannot be read
	dropped  []string // those of them without a row
	err      error
}

// chunkBufs are the chunks' text buffers, reused once written (a chunk's
// text is some hundreds of kilobytes; growing a new one per chunk was a
// sixth of extract --all's allocation).
var chunkBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readAll reads structs on jobs workers and writes each chunk's text to w
// in order, at most allWindow*jobs chunks ahead of the writer.
func (x *extractor) readAll(ctx context.Context, dbg *elfread.Debug, structs []*xStruct, jobs int, w io.Writer) ([]*chunk, error) {
	var chunks []*chunk
	for i := 0; i < len(structs); i += allChunk {
		chunks = append(chunks, &chunk{from: i, to: min(i+allChunk, len(structs)), done: make(chan struct{})})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// No more workers than chunks: -j is the user's number, and the
	// window's size must not overflow with it.
	jobs = min(jobs, max(len(chunks), 1))
	window := make(chan struct{}, allWindow*jobs)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The worker's memo of canonical spellings serves every
			// chunk it takes.
			canon := map[string]string{}
			scratch := newStructScratch()
			for {
				select {
				case window <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(chunks) {
					return
				}
				c := chunks[i]
				if err := ctx.Err(); err != nil {
					c.err = err
				} else {
					// SetPanicOnFault is per goroutine: a file truncated
					// while a worker reads it is an input error here too.
					c.err = elfread.Guard(func() error {
						xw := x.fork(dbg)
						xw.canonTypes = canon
						xw.scratch = scratch
						xw.readChunk(c, structs)
						return nil
					})
				}
				close(c.done)
			}
		}()
	}
	var err error
	for _, c := range chunks {
		select {
		case <-c.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
		if c.err != nil {
			err = c.err
			break
		}
		if _, werr := w.Write(c.text); werr != nil {
			err = werr
			break
		}
		c.text = nil
		chunkBufs.Put(c.buf)
		c.buf = nil
		<-window
	}
	cancel()
	wg.Wait()
	return chunks, err
}

// fork is a worker's extractor for one chunk: the rows, names, enums and
// the type graph of x shared read-only, its own record of the structs
// pointed to.
func (x *extractor) fork(dbg *elfread.Debug) *extractor {
	w := *x
	w.worker = true
	w.local = map[dwarf.Offset]*xStruct{}
	return &w
}

// readChunk reads the chunk's structs and renders their rows.
func (x *extractor) readChunk(c *chunk, structs []*xStruct) {
	x.opaques = map[string]bool{}
	b := chunkBufs.Get().(*bytes.Buffer)
	b.Reset()
	c.buf = b
	sw := &spec.Writer{W: b}
	for _, s := range structs[c.from:c.to] {
		size := s.size
		x.cur = s
		_, err := x.structAt(s.die, s.name)
		if err != nil || s.refused != "" {
			// The row is named already (other structs may spell members
			// by it), so it is written with the size the scan read, as one
			// opaque range that says why.
			why := s.refused
			if err != nil {
				why = err.Error()
			}
			c.unread = append(c.unread, esc.String(s.name+" ("+why+")"))
			if !spec.IsIdent(s.name) {
				// No member names it (a scoped or template name is never a
				// member's type), so it gets no row: check would fail to
				// read it as extract did.
				c.dropped = append(c.dropped, s.name+" ("+why+")")
				continue
			}
			s.fields, s.opaque, s.size, s.tag, s.packed, s.align = nil, []*xOpaque{{offset: 0, end: size}}, size, "", false, 0
			s.note = "its members cannot be read: " + why
			s.refused = "" // it has its row
		}
		sw.Struct(x.rowFor(s))
		// The row is written: its members are not needed again, and their
		// list's room serves the next struct.
		x.scratch.giveFields(s.fields)
		s.fields, s.opaque = nil, nil
	}
	c.text, c.opaques = b.Bytes(), x.opaques
}

// skips counts what extractAll passes over, one line per kind.
type skips struct{ lines []string }

func (s *skips) add(n int, what string) {
	if n > 0 {
		s.lines = append(s.lines, fmt.Sprintf("%d %s", n, what))
	}
}

// odrRow is the row a typedef's definition already has under the
// definition's own name in another unit, when the sizes agree; nil when it
// has none, or the definition cannot be read.
func (x *extractor) odrRow(idx *elfread.Index, t *elfread.Named) *xStruct {
	st, err := nodeOf(x.g, idx, t)
	if err != nil || st.Name == "" {
		return nil
	}
	if s, ok := x.byName[st.Name]; ok && t.Sized && s.size == t.Size && s.refused == "" {
		return s
	}
	return nil
}

// nodeOf is the graph's node of a definition idx lists: the one the one
// pass decoded (Index.Node), else the enum or struct g holds at its
// offset.
func nodeOf(g *elfread.Types, idx *elfread.Index, t *elfread.Named) (*typemodel.Type, error) {
	enum := t.Kind == "enum"
	if n, ok := idx.Node(t); ok && (n.Kind == typemodel.Enum) == enum {
		return n, nil
	}
	if enum {
		return g.Enum(t.Offset)
	}
	return g.Struct(t.Offset)
}

// rowNameProblem says why a struct named name can have no row of that
// name, "" when it can. A name the spec's type language reads as one of
// its own words (u32, int, char, const) would read back as the built-in in
// every member typed by it, a check of the object against its own
// fragment then INCOMPATIBLE; a name with control bytes is text the
// loader refuses (spec.TextProblem). Both are refused by name, never
// renamed: check finds a row by the name its DWARF gives.
func rowNameProblem(name string) string {
	if _, _, ok := spec.Builtin(name); ok {
		return fmt.Sprintf("named as the spec type language's built-in %s, which a member typed %s would read back as", name, name)
	}
	switch name {
	case "const", "volatile", "std::vector":
		return fmt.Sprintf("named as the spec type language's keyword %s", name)
	}
	if p := spec.TextProblem(name); p != "" {
		return "its name is no text a spec row can hold: " + p
	}
	return ""
}

// odr is what odrConflicts found: the names whose later definitions lay
// the type out differently from the first, each with why, and how many
// later definitions those are.
type odr struct {
	byName map[string]string
	copies int
}

// odrConflicts compares every later definition of a struct, class or
// union name (another unit's) with the first: an identical copy is the
// same C type, passed over as before; one with another size or other
// members is an ODR conflict, which no single row can state and which
// must not be decided by unit order (check would judge whichever copy it
// finds first). Such a name is refused by name, naming both copies'
// units' DIEs and how they differ (docs/nrtabi-extract.md#every-type---all).
func (x *extractor) odrConflicts(ctx context.Context, idx *elfread.Index, jobs int) (odr, error) {
	c := odr{byName: map[string]string{}}
	later := idx.Later
	// A later definition's first is the struct, class or union the index
	// lists under its name; a typedef's name (an alias) is none.
	first := func(t *elfread.Named) *elfread.Named {
		if f := t.First; f != nil && !f.Alias && f.Kind != "enum" {
			return f
		}
		return nil
	}
	// The comparisons are independent reads of the filled graph: they run
	// on jobs workers (libc's debug file has 20062 later definitions), each
	// with its own record of the layouts read, and are taken in order, so
	// that a name's first conflict is the one named, for every jobs.
	whys := make([]string, len(later))
	errs := make([]error, min(jobs, max(len(later), 1)))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			layouts := map[dwarf.Offset]*typemodel.Type{}
			layout := func(t *elfread.Named) *typemodel.Type {
				if l, ok := idx.Node(t); ok {
					return l
				}
				if l, ok := layouts[t.Offset]; ok {
					return l
				}
				l, err := x.g.Struct(t.Offset)
				if err != nil {
					l = nil // unreadable: the extraction of the first reports it
				}
				layouts[t.Offset] = l
				return l
			}
			// SetPanicOnFault is per goroutine: a file truncated while a
			// worker reads it is an input error here too.
			errs[w] = elfread.Guard(func() error {
				for {
					i := int(next.Add(1) - 1)
					if i >= len(later) {
						return nil
					}
					if err := ctx.Err(); err != nil {
						return err
					}
					whys[i] = odrWhy(first(later[i]), later[i], layout)
				}
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return c, err
		}
	}
	for i, t := range later {
		why := whys[i]
		if why == "" {
			continue
		}
		f := first(t)
		c.copies++
		if _, seen := c.byName[t.Name]; !seen {
			c.byName[t.Name] = fmt.Sprintf("defined differently by two units (an ODR conflict): the definition at DIE %#x is %d bytes, the one at DIE %#x %s; no one row states both, and which one a check judged would depend on unit order", f.DIE, f.Size, t.DIE, why)
		}
	}
	return c, nil
}

// odrWhy says how the later definition t lays its type out differently
// from f, the first of its name ("" when alike, or when there is nothing
// to compare: an alias, an enum, a declaration).
func odrWhy(f, t *elfread.Named, layout func(*elfread.Named) *typemodel.Type) string {
	if t.Alias || t.Kind == "enum" || f == nil || !f.Sized || !t.Sized {
		return "" // a declaration says nothing of a layout
	}
	if f.Size != t.Size {
		return fmt.Sprintf("%d bytes", t.Size)
	}
	if a, b := layout(f), layout(t); a != nil && b != nil {
		return membersDiffer(a, b)
	}
	return ""
}

// membersDiffer says how b's members differ from a's ("" when they are
// laid out alike: the same names at the same offsets and sizes).
func membersDiffer(a, b *typemodel.Type) string {
	if len(a.Fields) != len(b.Fields) {
		return fmt.Sprintf("has %d members where the first has %d", len(b.Fields), len(a.Fields))
	}
	for i := range a.Fields {
		m, n := &a.Fields[i], &b.Fields[i]
		// One interned node has one size: most members of two copies of
		// a header's struct are of the same node, and their sizes need
		// no walk down typedefs and arrays.
		if m.Name != n.Name || m.Offset != n.Offset || m.BitSize != n.BitSize || m.BitOffset != n.BitOffset || m.Type != n.Type && m.Size() != n.Size() {
			return fmt.Sprintf("has member %d as %s at %d (%d bytes) where the first has %s at %d (%d bytes)", i, n.Name, n.Offset, n.Size(), m.Name, m.Offset, m.Size())
		}
	}
	return ""
}
