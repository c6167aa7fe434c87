package release

import (
	"cmp"
	"context"
	"debug/dwarf"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// ExtractOptions says which structs Extract reads and where it looks for
// their DWARF.
type ExtractOptions struct {
	// Names are the structs to read: spec names, tags, typedefs or C++
	// qualified names.
	Names []string
	// SkipAbsent drops the names the DWARF lacks (the default "every spec
	// struct" request, of which a file holds some); otherwise each must be
	// found.
	SkipAbsent bool
	// Spec, when set, lets a spec name match its struct under any name the
	// spec gives it (tag, typedefs, TAG_t), and names the row by its spec
	// name.
	Spec *spec.Spec
	// Open and Mem, when set, read the file from memory (a package member)
	// and its DWARF from the run's debug packages (docs/packages.md).
	Open func(name string) (*elfread.File, error)
	Mem  *elfread.MemDebug

	// DebugDirs are where separate debug files are looked for when the file
	// holds no DWARF of its own (elfread.FindDebug).
	DebugDirs []string
	// Fetch downloads a debug file by build-id when no directory has it
	// (the commands wire debuginfod to it); nil: none is downloaded.
	Fetch elfread.Fetcher
	// All extracts every named struct, class, union and enum the DWARF
	// defines (Names is not used): the units are scanned on Jobs workers
	// (elfread.ScanAll; 0 is elfread.DefaultJobs) and the fragment is the
	// same for every Jobs. What it passes over is counted in Stats.Skipped
	// and in the fragment's comments; a struct without a layout is one of
	// those, not an error.
	All  bool
	Jobs int
	// Stats, when set, is filled with what the extraction read.
	Stats *ExtractStats
}

// ExtractStats is what an extraction read and passed over.
type ExtractStats struct {
	Units     int   // units scanned (All)
	InfoBytes int64 // bytes of .debug_info over every part (All)
	Types     int   // named definitions found (All)
	Structs   int   // struct rows written
	Enums     int   // enum rows written
	// Skipped has one line per kind of thing passed over, counted
	// ("3 anonymous definitions no typedef names").
	Skipped []string
	// The wall time of extractAll's steps: the parallel scan, the serial
	// naming of the rows and the enums, the parallel reading and writing of
	// the structs (docs/nrtabi-extract.md#every-type---all).
	ScanTime, NameTime, ReadTime time.Duration
}

// Extract reads the structs opt names from the DWARF of path and writes them
// to w as a spec fragment that spec.LoadDir accepts: [[struct]] rows plus
// the [[enum]] and [[opaque_type]] rows they use. Members the spec grammar
// cannot spell (bitfields, unions, base classes, floats, function pointers,
// C++ templates) become opaque ranges whose covers list names them, so
// checking the same file against the fragment is clean. Structs with no
// layout a spec struct can hold are left out: the fragment of the others is
// written and the error is a *RefusedError naming them.
func Extract(path string, w io.Writer, opt ExtractOptions) error {
	return ExtractContext(context.Background(), path, w, opt)
}

// ExtractContext is Extract ending early, with ctx's error, when ctx is
// done (the scan of ExtractOptions.All checks it between units).
func ExtractContext(ctx context.Context, path string, w io.Writer, opt ExtractOptions) error {
	dbg, err := openDebug(ctx, path, opt)
	if err != nil {
		return err
	}
	defer dbg.Close()
	if opt.All {
		return extractAll(ctx, dbg.Input, dbg, opt, w)
	}
	frag, err := extractFrom(dbg.Input, dbg, opt)
	if frag == nil {
		return err
	}
	if werr := frag.write(w); werr != nil {
		return fmt.Errorf("writing the fragment of %s: %w", path, werr)
	}
	return err
}

// extractFrom is Extract on an open file and its DWARF, returning the rows
// instead of writing them; opt.DebugDirs is not used (dbg is found).
func extractFrom(obj *elfread.File, dbg *elfread.Debug, opt ExtractOptions) (*fragment, error) {
	names, skipAbsent, sp := opt.Names, opt.SkipAbsent, opt.Spec
	path := obj.Path
	wants := make([][]string, len(names))
	outNames := make([]string, len(names))
	for i, n := range names {
		wants[i], outNames[i] = []string{n}, n
		if sp != nil {
			if st := sp.StructByName(n); st != nil {
				wants[i], outNames[i] = specmatch.StructNames(st), st.Name
			}
		}
	}
	found, err := dbg.FindStructs(wants)
	if err != nil {
		return nil, err
	}
	var missing []string
	keep := found[:0:0]
	var keepNames, keepAsked []string
	for i, f := range found {
		if f == nil {
			missing = append(missing, names[i])
			continue
		}
		keep, keepNames, keepAsked = append(keep, f), append(keepNames, outNames[i]), append(keepAsked, names[i])
	}
	if len(missing) > 0 && !skipAbsent || len(keep) == 0 {
		if label, ok := specmatch.Label(path); ok {
			return nil, elfread.InputErrorf(label, "declares no struct %s", strings.Join(missing, ", "))
		}
		return nil, elfread.InputErrorf(path, "no struct %s in the DWARF of %s", strings.Join(missing, ", "), dbg.Path())
	}
	found, outNames, names = keep, keepNames, keepAsked
	x := newExtractor(obj, dbg, sp)
	for i, f := range found {
		x.reserve(f.Offset, outNames[i])
	}
	var refused []string
	for i, f := range found {
		s, err := x.structAt(f.Offset, outNames[i])
		if err != nil {
			return nil, wrapInput(dbg.Path(), err, "%s", names[i])
		}
		if s.refused != "" {
			refused = append(refused, names[i]+" ("+s.refused+")")
		}
	}
	if len(refused) == len(found) {
		return nil, elfread.InputErrorf(dbg.Path(), "nothing to extract: %s", strings.Join(refused, "; "))
	}
	frag := x.rows(path, obj.BuildID, dbg)
	frag.Refused = refused
	if st := opt.Stats; st != nil {
		st.Structs, st.Enums = len(frag.Structs), len(frag.Enums)
	}
	if len(refused) > 0 {
		return frag, &RefusedError{Path: dbg.Path(), Refused: refused}
	}
	return frag, nil
}

// newExtractor prepares to read structs from dbg, the DWARF of obj.
func newExtractor(obj *elfread.File, dbg *elfread.Debug, sp *spec.Spec) *extractor {
	path := obj.Path
	x := &extractor{g: dbg.Types(), byOff: map[dwarf.Offset]*xStruct{}, byName: map[string]*xStruct{},
		enums: map[string]*xEnum{}, enumerators: map[string]bool{}, opaques: map[string]bool{}, sp: sp, names: specmatch.NewNames(sp), conf: spec.High, mainDebug: dbg.Path(),
		find: dbg.FindStructs, foreign: map[string]bool{}}
	x.source = fmt.Sprintf("nrtabi extract from %s", inputText(path))
	if obj.BuildID != "" {
		x.source += " (build-id " + obj.BuildID + ")"
	}
	if dbg.Via != elfread.ViaEmbedded {
		x.source += fmt.Sprintf(", DWARF from %s via %s", inputText(dbg.Path()), dbg.Via)
	}
	for _, p := range dbg.Parts()[1:] {
		x.source += fmt.Sprintf(", and from %s (%s)", inputText(p.Path), p.Via)
	}
	if label, ok := specmatch.Label(path); ok {
		// A compiled header set: the headers are the source, not the
		// temporary object; a declaration is not a byte-anchored fact.
		x.source, x.conf = "nrtabi extract from "+inputText(label), spec.Med
	}
	return x
}

// RefusedError: these structs have no layout a spec struct can hold (a
// declaration without a size, a GNU C empty struct of 0 bytes). Extract
// writes the fragment of the other structs before returning it, and that
// fragment loads.
type RefusedError struct {
	Path    string
	Refused []string // "NAME (why)"
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: not extracted (the fragment holds the other structs): %s", e.Path, strings.Join(e.Refused, "; "))
}

// wrapInput passes err on as the one-line *elfread.InputError about path
// that callers expect ("path: what: err", newlines escaped), with err
// reachable by errors.Is and errors.As.
func wrapInput(path string, err error, format string, args ...any) error {
	return elfread.InputErrorf(path, format+": %w", append(args, err)...)
}

type xField struct {
	name, typ, note string
	offset          int64
}

type xOpaque struct {
	offset, end int64
	covers      []string
}

type xStruct struct {
	name, tag, note string
	die             dwarf.Offset
	size, align     int64
	packed, done    bool
	err             error // structAt failed: every later call fails alike
	// rowless: extractAll gives the struct no row; fixed before its workers
	// start, so they read it (and name) without a lock, never refused or
	// building, which the worker reading the struct writes.
	rowless  bool
	refused  string // why the struct has no spec layout ("" when it has one)
	building bool   // structAt is inside it: a by-value reference now is a cycle
	fields   []xField
	opaque   []*xOpaque
}

type xEnum struct {
	name, tag string
	size      int
	values    []spec.EnumValue // aliases stated (alias_of the first name of the value)
}

type extractor struct {
	g           *elfread.Types // the DWARF's type graph, shared by extractAll's workers
	sp          *spec.Spec
	names       *specmatch.Names // sp's names, read by every worker
	source      string
	order       []*xStruct
	byOff       map[dwarf.Offset]*xStruct
	byName      map[string]*xStruct
	enums       map[string]*xEnum
	enumOrder   []string
	enumerators map[string]bool
	opaques     map[string]bool
	typeDepth   int       // specType levels in progress
	structDepth int       // structAt levels in progress
	conf        spec.Conf // of the facts written: HIGH from a binary's DWARF
	mainDebug   string    // the file the DWARF was found in (its parts are named per DIE)
	// find looks structs up as check will (FindStructs); foreign caches
	// which row names it finds laid out otherwise than the DIE a member
	// reached (elsewhere).
	find    func([][]string) ([]*elfread.Found, error)
	foreign map[string]bool
	// closed: every row is reserved (extractAll); a struct found through a
	// member under a name no row has is spelled as an opaque range.
	closed bool
	// enumsClosed: every enum row is made (extractAll); an enum met in a
	// member and not among them is spelled by its size.
	enumsClosed bool
	// worker: this is one of extractAll's workers (extractor.fork), which
	// reads only the structs it is given. It shares the maps above with
	// the others read-only; what it learns goes to local and its own
	// opaques.
	worker bool
	local  map[dwarf.Offset]*xStruct // byOff entries this worker found (ODR copies)
	cur    *xStruct                  // the struct this worker is reading
	// canonTypes: an extractAll worker's memo of specType's canonical
	// spelling of each spelling (spec.ParseType then String was a
	// fifteenth of extract --all's CPU on the synthetic object,
	// docs/benchmarks.md#less-fresh-memory-per-die); nil: none.
	canonTypes map[string]string
	// row: an extractAll worker's [[struct]] row, rewritten for each
	// struct it writes (rowFor), its member lists' room kept.
	row *spec.Struct
	// scratch: an extractAll worker's room for structAt's lists; nil:
	// fresh lists for every struct.
	scratch *structScratch
}

// hasRow: s is written as a row. A worker asks rowless only (see there).
func (x *extractor) hasRow(s *xStruct) bool {
	if x.worker {
		return !s.rowless
	}
	return s.refused == ""
}

// maxStructDepth bounds structs nested by value inside each other (real
// ones nest a few levels).
const maxStructDepth = 256

func (x *extractor) reserve(off dwarf.Offset, name string) *xStruct {
	if s, ok := x.byOff[off]; ok {
		return s
	}
	if s, ok := x.local[off]; ok {
		return s
	}
	if s, ok := x.byName[name]; ok {
		if x.worker {
			x.local[off] = s
		} else {
			x.byOff[off] = s
		}
		return s
	}
	if x.closed {
		return nil
	}
	s := &xStruct{name: name, die: off}
	x.byOff[off], x.byName[name] = s, s
	x.order = append(x.order, s)
	return s
}

// specName prefers the spec's name for a DWARF struct, so a fragment and the
// release spec speak of the same struct.
func (x *extractor) specName(d *typemodel.Type, tds []string) string {
	if x.sp != nil {
		if st := x.names.StructNamed(d.Name, tds); st != nil {
			return st.Name
		}
	}
	if len(tds) > 0 {
		return tds[0]
	}
	return d.Name
}

func (x *extractor) structAt(off dwarf.Offset, name string) (s *xStruct, err error) {
	s = x.reserve(off, name)
	if s == nil {
		return nil, fmt.Errorf("no row is named %s", name)
	}
	if s.done {
		if s.err != nil {
			return nil, s.err
		}
		return s, nil
	}
	s.done = true
	s.building = true
	self := s // s is the result, nil on an error
	defer func() {
		self.building = false
		if err != nil {
			// A struct read again (a member of a later struct) fails as the
			// first read did, never as a row without a layout.
			self.err, self.refused = err, "its layout cannot be read: "+err.Error()
		}
	}()
	if x.structDepth >= maxStructDepth {
		return nil, fmt.Errorf("structs nest by value more than %d deep", maxStructDepth)
	}
	x.structDepth++
	defer func() { x.structDepth-- }()
	// A struct only enters the spec when the grammar can spell it.
	saved := x.typeDepth
	x.typeDepth = 0
	defer func() { x.typeDepth = saved }()
	l, err := x.g.Struct(off)
	if err != nil {
		return nil, err
	}
	if l.Size > spec.MaxObjectSize || l.Size < 0 {
		return nil, fmt.Errorf("%s %s is %d bytes; a spec struct has at most %d, so it cannot be extracted", l.Kind, l.Name, l.Size, spec.MaxObjectSize)
	}
	for i := range l.Fields {
		m := &l.Fields[i]
		if !m.Virtual && (m.Offset < 0 || m.End() > spec.MaxObjectSize) {
			return nil, fmt.Errorf("member %s at %d (%d bytes) lies beyond the %d bytes a spec struct can have, so it cannot be extracted", m.Label(), m.Offset, m.Size(), spec.MaxObjectSize)
		}
	}
	switch {
	case l.Incomplete():
		s.refused = fmt.Sprintf("%s %s has no size in this DWARF (a declaration or an incomplete type); extract it from a file that defines it", l.Kind, l.Name)
		return s, nil
	case l.Size == 0:
		s.refused = fmt.Sprintf("%s %s is empty (0 bytes: a GNU C struct {}, a Rust zero-sized type); a spec struct has at least one byte", l.Kind, l.Name)
		return s, nil
	}
	s.size = l.Size
	// extractAll names every row before any is read, each name and the tag
	// it implies unique; a DWARF tag set here could be another row's name.
	if !x.closed && l.Name != "" && l.Name != strings.TrimSuffix(s.name, "_t") && l.Name != s.name {
		s.tag = l.Name
	}
	align := typemodel.StructAlign(l)
	if l.Kind == typemodel.Union {
		var covers []string
		for i := range l.Fields {
			covers = append(covers, l.Fields[i].Label())
		}
		s.opaque = append(s.opaque, &xOpaque{offset: 0, end: l.Size, covers: covers})
		s.note = "a union in the binary; the spec grammar has no unions"
		if align > 1 && l.Size%align != 0 {
			// A size no multiple of the members' alignment: a packed union,
			// or one holding a packed struct whose own members do not show
			// it (the kernel's union text_poke_insn, 5 bytes round an s32),
			// as for a struct below.
			s.packed = true
		} else {
			s.align = align
		}
		return s, nil
	}
	packed := false
	for i := range l.Fields {
		m := &l.Fields[i]
		if !m.Virtual && m.BitSize == 0 && m.Size() > 0 && m.Offset%typemodel.AlignOf(m.Type) != 0 {
			packed = true
		}
	}
	if align > 1 && l.Size%align != 0 {
		packed = true
	}
	s.packed = packed
	if !packed {
		s.align = align
	}
	// Each member becomes a field or an opaque piece; pieces that overlap
	// (bitfields sharing a unit, empty bases, unions) merge into one opaque
	// range that covers them all.
	// The fields the items point to are in one list whose room is the
	// members' count, so it never moves while they point into it; both
	// lists are an extractAll worker's, reused (lists).
	depth := x.structDepth
	items, fbuf := x.scratch.lists(depth, len(l.Fields))
	defer func() { x.scratch.keep(depth, items, fbuf) }()
	dup := repeatedNames(l.Fields, x.scratch.names())
	for i := range l.Fields {
		m := &l.Fields[i]
		// A zero-size member is skipped, except a flexible array member at
		// the end, which is part of the declared layout (it may start
		// before the struct's tail padding: struct { int64_t a; char b;
		// short t[]; } has t at 10 of 16).
		sm := typemodel.Strip(m.Type)
		isArray := sm != nil && sm.Kind == typemodel.Array
		last := i == len(l.Fields)-1 && isArray
		if m.Virtual || m.Size() == 0 && m.BitSize == 0 && !last || m.Base && typemodel.EmptyClass(m.Type) {
			continue
		}
		if strings.HasPrefix(m.Name, spec.OpaqueMemberPrefix) {
			items = append(items, layoutItem{start: m.Offset, end: m.End()})
			continue
		}
		if m.BitSize == 0 && !m.Base && !m.Artificial && spec.IsIdent(m.Name) && !dup[m.Name] {
			if t, note, ok := x.specType(m.Type, last); ok {
				fbuf = append(fbuf, xField{name: m.Name, typ: t, note: note, offset: m.Offset})
				items = append(items, layoutItem{start: m.Offset, end: m.End(), field: &fbuf[len(fbuf)-1]})
				continue
			}
		}
		start := m.Offset
		if m.BitSize > 0 {
			start = m.BitOffset / 8
		}
		if m.End() <= start {
			// A zero-size member the grammar cannot spell (a flexible array
			// of doubles, an empty struct) takes no bytes: no opaque range
			// (the loader refuses empty ones), and check skips it too.
			continue
		}
		items = append(items, layoutItem{start: start, end: m.End(), cover: m.Label()})
	}
	// The members usually come in offset order already: a stable sort of
	// sorted items leaves them as they are, so it is skipped.
	byStart := func(a, b layoutItem) int { return cmp.Compare(a.start, b.start) }
	if !slices.IsSortedFunc(items, byStart) {
		slices.SortStableFunc(items, byStart)
	}
	if s == x.cur && s.fields == nil {
		s.fields = x.scratch.takeFields()
	}
	s.fields = slices.Grow(s.fields, len(fbuf))
	for i := 0; i < len(items); {
		g := items[i]
		j := i + 1
		for j < len(items) && items[j].start < g.end {
			j++
			g.end = max(g.end, items[j-1].end)
		}
		if j == i+1 && g.field != nil {
			s.fields = append(s.fields, *g.field)
		} else {
			o := &xOpaque{offset: g.start, end: g.end}
			for _, it := range items[i:j] {
				switch {
				case it.field != nil:
					o.covers = append(o.covers, it.field.name)
				case it.cover != "":
					o.covers = append(o.covers, it.cover)
				}
			}
			s.opaque = append(s.opaque, o)
		}
		i = j
	}
	if len(s.fields) == 0 && len(s.opaque) == 0 {
		// A C++ class without data members (or with static ones only) still
		// takes a byte: one opaque range holds it, so the loader has a
		// layout to check.
		o := &xOpaque{offset: 0, end: l.Size}
		for i := range l.Fields {
			o.covers = append(o.covers, l.Fields[i].Label())
		}
		s.opaque = append(s.opaque, o)
		s.note = fmt.Sprintf("no data members in the binary: %d byte(s) of storage only", l.Size)
	}
	return s, nil
}

// repeatedNames are the names more than one of fields carries, nil when
// none does: Go's blank fields (a struct's padding, each named _), or a
// hostile DWARF. A spec struct declares a field name once, so those
// members are covered by opaque ranges instead of written as fields the
// loader would refuse (docs/nrtabi-extract.md#never-a-file-the-loader-refuses).
// seen is an empty map to use for a long list, nil for a fresh one: a
// fresh map per struct was a third of the synthetic object's peak RSS
// (its 51085 structs have 150 members each).
func repeatedNames(fields []typemodel.Field, seen map[string]bool) map[string]bool {
	var dup map[string]bool
	if len(fields) <= 16 {
		for i := range fields {
			for j := range i {
				if fields[i].Name != "" && fields[i].Name == fields[j].Name {
					if dup == nil {
						dup = map[string]bool{}
					}
					dup[fields[i].Name] = true
				}
			}
		}
		return dup
	}
	if seen == nil {
		seen = make(map[string]bool, len(fields))
	}
	for i := range fields {
		n := fields[i].Name
		if n == "" {
			continue
		}
		if seen[n] {
			if dup == nil {
				dup = map[string]bool{}
			}
			dup[n] = true
		}
		seen[n] = true
	}
	return dup
}

var intNames = map[string]string{
	"uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
	"int8_t": "i8", "int16_t": "i16", "int32_t": "i32", "int64_t": "i64",
	"size_t": "size_t", "ssize_t": "ssize_t", "time_t": "time_t", "uintptr_t": "uintptr_t",
	"pthread_mutex_t": "pthread_mutex_t", "cpu_set_t": "cpu_set_t",
}

// specType spells a DWARF type in the spec grammar, or reports that it
// cannot. The spelling is canonical (spec.ParseType then String), so the
// fragment holds the text the loader would print back.
func (x *extractor) specType(t *typemodel.Type, last bool) (string, string, bool) {
	s, note, ok := x.spell(t, last, cvQuals{})
	if !ok {
		return "", "", false
	}
	if c, ok := x.canonTypes[s]; ok {
		return c, note, true
	}
	spelled := s
	if pt, err := spec.ParseType(s); err == nil {
		s = pt.String()
	}
	if x.canonTypes != nil && len(x.canonTypes) < maxCanonTypes {
		x.canonTypes[spelled] = s
	}
	return s, note, true
}

// maxCanonTypes bounds an extractAll worker's memo of canonical
// spellings (a crafted input may spell each member differently).
const maxCanonTypes = 1 << 16

// intSpelling is the spec's name of an integer of size bytes (1, 2, 4 or
// 8): i8 ... u64, without formatting one per member.
func intSpelling(size int64, signed bool) string {
	switch {
	case size == 1 && signed:
		return "i8"
	case size == 1:
		return "u8"
	case size == 2 && signed:
		return "i16"
	case size == 2:
		return "u16"
	case size == 4 && signed:
		return "i32"
	case size == 4:
		return "u32"
	case signed:
		return "i64"
	}
	return "u64"
}

// cvQuals are the qualifiers met on the way down to a named type. Those of
// an array qualify its elements (C's rule), so they are carried down.
type cvQuals struct{ c, v bool }

func (q cvQuals) prefix() string {
	s := ""
	if q.c {
		s += "const "
	}
	if q.v {
		s += "volatile "
	}
	return s
}

func (q cvQuals) suffix() string {
	return strings.TrimSuffix(" "+q.prefix(), " ")
}

// qualsOf collects the qualifiers of t's typedef and qualifier chain.
func qualsOf(t *typemodel.Type, q cvQuals) cvQuals {
	for range typemodel.MaxDepth {
		if t == nil {
			return q
		}
		switch t.Kind {
		case typemodel.Const:
			q.c = true
		case typemodel.Volatile:
			q.v = true
		case typemodel.Typedef, typemodel.Restrict, typemodel.Atomic:
		default:
			return q
		}
		t = t.Elem
	}
	return q
}

// spell writes t in the spec grammar, its pending qualifiers q included.
// The grammar is postfix: "int*[4]*[10]" is C's int *(*d[10])[4], an array
// of ten pointers to arrays of four int pointers.
func (x *extractor) spell(t *typemodel.Type, last bool, q cvQuals) (string, string, bool) {
	// Each pointer, array and vector level is one level of the spec's type
	// grammar, which stops at spec.MaxTypeDepth; a chain of DWARF types
	// that loops (a pointer to itself) ends there too.
	if x.typeDepth >= spec.MaxTypeDepth {
		return "", "", false
	}
	x.typeDepth++
	defer func() { x.typeDepth-- }()
	if typemodel.SizeOf(t) > spec.MaxObjectSize {
		return "", "", false // larger than the spec can spell: an opaque range
	}
	q = qualsOf(t, q)
	named := func(s, note string, ok bool) (string, string, bool) {
		if !ok {
			return "", "", false
		}
		return q.prefix() + s, note, true
	}
	tds := typemodel.Typedefs(t)
	d := typemodel.Strip(t)
	for _, n := range tds {
		if b, ok := intNames[n]; ok {
			if _, _, known := spec.Builtin(b); known && sizeOfBuiltin(b) == typemodel.SizeOf(d) {
				return named(b, "", true)
			}
		}
	}
	if d == nil {
		return "", "", false
	}
	switch d.Kind {
	case typemodel.Base:
		if d.Encoding == typemodel.EncBoolean {
			if typemodel.SizeOf(d) == 1 {
				return named("bool", "", true)
			}
			break
		}
		size, signed, ok := typemodel.IntShape(d)
		switch {
		case !ok:
		// A base type goes by its C name only at the C size: Go's int
		// and uint are 8 bytes (an i64 and a u64).
		case d.Name == "char" && size == 1:
			return named("char", "", true)
		case d.Name == "int" && size == 4:
			return named("int", "", true)
		case d.Name == "unsigned int" && size == 4:
			return named("unsigned", "", true)
		case size == 1 || size == 2 || size == 4 || size == 8:
			return named(intSpelling(size, signed), "", true)
		}
	case typemodel.Enum:
		return named(x.enumType(d, tds))
	case typemodel.Pointer:
		// The pointer's own qualifiers follow its '*'.
		self := q.suffix()
		pt := typemodel.Strip(d.Elem)
		pq := qualsOf(d.Elem, cvQuals{})
		if typemodel.IsVoid(pt) {
			return pq.prefix() + "void*" + self, "", true
		}
		isStruct := pt.Kind.Aggregate()
		// A pointee may be a flexible array (the kernel's
		// const struct uverbs_attr_def *const (*attrs)[]: T[]*).
		if inner, _, ok := x.spell(d.Elem, true, cvQuals{}); ok && !isStruct {
			return inner + "*" + self, "", true
		}
		if isStruct {
			st := pt
			ptds := typemodel.Typedefs(d.Elem)
			name := x.specName(st, ptds)
			if x.closed {
				// Every row is known (extractAll): the pointee's own row,
				// whatever typedef the pointer goes through (__c_file is
				// struct _IO_FILE), or, for a defined struct without one
				// (nested in a class, anonymous), an opaque range: check
				// compares the pointee.
				s := x.rowOf(st, name)
				switch {
				case s != nil && x.hasRow(s) && spec.IsIdent(s.name):
					return pq.prefix() + s.name + "*" + self, "", true
				case s != nil && x.hasRow(s), s == nil && !st.Incomplete():
					return "", "", false
				}
			}
			if s, ok := x.byName[name]; ok && x.hasRow(s) && spec.IsIdent(s.name) {
				return pq.prefix() + s.name + "*" + self, "", true
			}
			if spec.IsIdent(name) && !x.enumerators[name] && x.enums[name] == nil {
				x.opaques[name] = true
				return pq.prefix() + name + "*" + self, "", true
			}
			// A struct the grammar cannot name (a C++ scoped or template
			// name): an opaque range, which check passes, where a void*
			// would be a pointer-target change against the file itself.
			return "", "", false
		}
		if x.closed && pointsToStruct(d.Elem) {
			// A pointer to a pointer to a struct: check compares the
			// pointee, so a void* would be a change against the file itself.
			return "", "", false
		}
		return "void*" + self, "points to " + typemodel.Spell(d.Elem), true
	case typemodel.Array:
		if d.Count <= 0 && !last {
			return "", "", false
		}
		inner, _, ok := x.spell(d.Elem, false, q)
		if !ok {
			return "", "", false
		}
		if strings.Contains(inner, "[]") || strings.HasPrefix(inner, "std::") {
			return "", "", false
		}
		dim := "[]"
		if d.Count > 0 {
			dim = fmt.Sprintf("[%d]", d.Count)
		}
		// Dimensions written one after another read as in C ("u8[2][3]" is
		// two arrays of three u8), so this outer dimension goes before the
		// element's own trailing run of dimensions. An element that ends in
		// a pointer ("int*[4]*") takes the dimension at the end.
		run := len(inner)
		for run > 0 && inner[run-1] == ']' {
			open := strings.LastIndexByte(inner[:run], '[')
			if open < 0 {
				break
			}
			run = open
		}
		return inner[:run] + dim + inner[run:], "", true
	case typemodel.Struct, typemodel.Class, typemodel.Union:
		if elem, ok := x.generatedVector(d); ok {
			return named("std::vector<"+elem+">", "", true)
		}
		if strings.HasPrefix(d.Name, "std::vector<") && typemodel.SizeOf(d) == 24 {
			args := elfread.TemplateArgs(d.Name[len("std::vector"):])
			if b, ok := cppScalar[args[0]]; ok {
				return named("std::vector<"+b+">", "", true)
			}
			return "", "", false
		}
		if d.Kind == typemodel.Union || d.Incomplete() {
			return "", "", false
		}
		name := x.specName(d, tds)
		if !spec.IsIdent(name) {
			return "", "", false
		}
		off := dwarf.Offset(d.Offset)
		if x.worker {
			// Another worker may be reading that struct: its row is named,
			// and whether it has one was settled before the workers
			// started (extractAll).
			s := x.reserve(off, name)
			if s == nil || s.rowless || s == x.cur || !spec.IsIdent(s.name) {
				return "", "", false
			}
			return named(s.name, "", true)
		}
		if _, seen := x.byOff[off]; !seen && !x.closed {
			if s := x.rowTagged(d); s != nil {
				// Another unit's copy of a struct that has its row (ODR:
				// struct _IO_FILE reached through FILE in argp_state and
				// asked for by name): the same C type, the same row.
				x.byOff[off], name = s, s.name
			}
		}
		if _, seen := x.byOff[off]; !seen && x.foreignRow(d, name) {
			// check would find another struct of this name (the first
			// definition, in unit order: grp.h's struct group where argp's
			// private struct group was reached): a row of it would be
			// judged against that one. The member stays an opaque range.
			return "", "", false
		}
		if s, ok := x.byOff[off]; ok && s.building {
			// A struct that holds itself by value (only corrupted DWARF says
			// so): the spec would refuse it, so it stays an opaque range.
			return "", "", false
		}
		s, err := x.structAt(off, name)
		if err != nil || s.refused != "" || !spec.IsIdent(s.name) {
			// A row named by C++ scope (extractAll) is no type the grammar
			// can spell: the member is an opaque range.
			return "", "", false
		}
		return named(s.name, "", true)
	}
	return "", "", false
}

// plantNoForeignCheck is a planted fault for the tests only: foreignRow
// never finds another struct of the name.
var plantNoForeignCheck bool

// foreignRow: a row named name for the struct d, reached through a member
// (extractFrom, not extractAll), is not what check finds by that name: the
// struct FindStructs finds first under it (or under d's tag) is another
// DIE, laid out otherwise.
func (x *extractor) foreignRow(d *typemodel.Type, name string) bool {
	if x.closed || x.find == nil || plantNoForeignCheck {
		return false
	}
	if v, ok := x.foreign[name]; ok {
		return v
	}
	names := []string{name}
	if d.Name != "" && d.Name != name {
		names = append(names, d.Name)
	}
	v := false
	if found, err := x.find([][]string{names}); err == nil && found[0] != nil && uint64(found[0].Offset) != d.Offset {
		if other, err := x.g.Struct(found[0].Offset); err != nil || other.Size != d.Size || membersDiffer(other, d) != "" {
			v = true
		}
	}
	x.foreign[name] = v
	return v
}

// rowTagged is the row of another DIE whose name or tag is d's qualified
// name, when its size (once read) is d's: nil when there is none.
func (x *extractor) rowTagged(d *typemodel.Type) *xStruct {
	if d.Name == "" {
		return nil
	}
	for _, s := range x.order {
		if (s.name == d.Name || s.tag == d.Name) && (!s.done || s.size == typemodel.SizeOf(d)) && s.refused == "" {
			return s
		}
	}
	return nil
}

// rowOf is the row of a struct type met in a member (extractAll): by its
// DIE, else by name (an ODR copy in another unit), else by its DWARF name.
func (x *extractor) rowOf(st *typemodel.Type, name string) *xStruct {
	off := dwarf.Offset(st.Offset)
	if s, ok := x.byOff[off]; ok {
		return s
	}
	if s, ok := x.local[off]; ok {
		return s
	}
	if s, ok := x.byName[name]; ok {
		return s
	}
	return x.byName[st.Name]
}

// pointsToStruct: t is a pointer chain (through typedefs and qualifiers)
// that ends at a struct, class or union.
func pointsToStruct(t *typemodel.Type) bool {
	for range typemodel.MaxDepth {
		p := typemodel.Strip(t)
		switch {
		case p == nil:
			return false
		case p.Kind == typemodel.Pointer:
			t = p.Elem
		case p.Kind.Aggregate():
			return true
		default:
			return false
		}
	}
	return false
}

// generatedVector recognises the C spelling of std::vector<T> that the
// generated header uses (struct nrtabi_vector_*_t of three T pointers), so a
// binary built from the header extracts back to the spec's type.
func (x *extractor) generatedVector(d *typemodel.Type) (string, bool) {
	if !strings.HasPrefix(d.Name, spec.VectorPrefix) || typemodel.SizeOf(d) != 24 || len(d.Fields) != 3 {
		return "", false
	}
	p := typemodel.Strip(d.Fields[0].Type)
	if p == nil || p.Kind != typemodel.Pointer {
		return "", false
	}
	elem, _, ok := x.specType(p.Elem, false)
	return elem, ok
}

var cppScalar = map[string]string{"unsignedint": "u32", "int": "int", "char": "char", "unsignedchar": "u8", "long": "i64", "unsignedlong": "u64", "bool": "bool"}

func sizeOfBuiltin(name string) int64 {
	t, err := spec.ParseType(name)
	if err != nil {
		return -1
	}
	return int64(t.Size())
}

// enumType declares a DWARF enum as a spec enum when the spec's rules allow
// (1, 2, 4 or 8 bytes, values that fit them, enumerator names unique and C
// identifiers), else spells it by size. Several names of one value are
// aliases, written with alias_of naming the first (docs/spec-format.md#enums),
// so that a field of the enum keeps its type.
func (x *extractor) enumType(d *typemodel.Type, tds []string) (string, string, bool) {
	// An enum in a namespace or a class has its qualified name, which no
	// spec enum can have, not the bare name another scope's enum may share.
	name := d.Name
	if len(tds) > 0 {
		name = tds[0]
	}
	size := typemodel.SizeOf(d)
	bySize := func(why string) (string, string, bool) {
		switch size {
		case 1, 2, 4, 8:
			return fmt.Sprintf("u%d", size*8), "enum " + d.Name + " in the binary (" + why + ")", true
		}
		return "", "", false
	}
	if e, ok := x.enums[name]; ok {
		return e.name, "", true
	}
	if x.enumsClosed {
		return bySize("an enum without a row of its own")
	}
	if !spec.IsIdent(name) || !spec.EnumSizeValid(int(size)) || len(d.Enumerators) == 0 || x.byName[name] != nil || x.opaques[name] {
		return bySize("spelled by size")
	}
	se := spec.Enum{Name: name, Size: int(size)}
	first, names := map[int64]string{}, map[string]bool{}
	for _, v := range d.Enumerators {
		if names[v.Name] || x.enumerators[v.Name] || !spec.IsIdent(v.Name) {
			return bySize("its enumerators do not make a spec enum")
		}
		ev := spec.EnumValue{Name: v.Name, Value: v.Value}
		if f, ok := first[v.Value]; ok {
			ev.AliasOf = f
		} else {
			first[v.Value] = v.Name
		}
		names[v.Name] = true
		se.Values = append(se.Values, ev)
	}
	lo, hi := se.Range()
	for _, v := range se.Values {
		if v.Value < lo || v.Value > hi {
			return bySize(fmt.Sprintf("%s = %d does not fit its %d bytes", v.Name, v.Value, se.Size))
		}
	}
	for n := range names {
		x.enumerators[n] = true
	}
	tag := ""
	if d.Name != "" && d.Name != name {
		tag = d.Name
	}
	x.enums[name] = &xEnum{name: name, tag: tag, size: se.Size, values: se.Values}
	x.enumOrder = append(x.enumOrder, name)
	return name, "", true
}

// fragment is what extractFrom read: spec rows in the order a fragment file
// lists them. It is written (write) only where a file is made.
type fragment struct {
	Opaques []spec.OpaqueType
	Enums   []spec.Enum
	Structs []*spec.Struct
	Refused []string // "NAME (why)": asked for, left out
	Skipped []string // what extractAll passed over, one counted line per kind
	header  string   // the comment naming the file and its DWARF
}

func (x *extractor) rows(path, buildID string, dbg *elfread.Debug) *fragment {
	f := &fragment{header: x.header(path, buildID, dbg)}
	f.Opaques = x.opaqueRows()
	f.Enums = x.enumRows()
	for _, s := range x.order {
		if s.refused != "" {
			continue
		}
		f.Structs = append(f.Structs, x.structRow(s))
	}
	return f
}

// header is the comment naming the file and its DWARF. File names are
// escaped (package esc): a newline in one would end its comment and start
// a TOML line.
func (x *extractor) header(path, buildID string, dbg *elfread.Debug) string {
	var h strings.Builder
	if label, ok := specmatch.Label(path); ok {
		fmt.Fprintf(&h, "# Struct fragment written by nrtabi extract.\n# from: %s\n# DWARF: gcc -g of the headers\n#\n", esc.String(label))
	} else {
		fmt.Fprintf(&h, "# Struct fragment written by nrtabi extract.\n# file: %s\n", esc.String(path))
		if buildID != "" {
			fmt.Fprintf(&h, "# build-id: %s\n", buildID)
		}
		fmt.Fprintf(&h, "# DWARF: %s (%s)\n#\n", esc.String(dbg.Path()), esc.String(dbg.Via))
	}
	fmt.Fprintf(&h, "# A fragment holds structs only: check it with\n#   nrtabi check --spec DIR FILE\n# (the link-contract facts come from the embedded release).\n")
	return h.String()
}

func (x *extractor) fact(source string) spec.Fact { return spec.Fact{Conf: x.conf, Source: source} }

// opaqueRows are the structs pointed to that have no row, by name.
func (x *extractor) opaqueRows() []spec.OpaqueType {
	names := make([]string, 0, len(x.opaques))
	for n := range x.opaques {
		if s := x.byName[n]; s == nil || s.refused != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []spec.OpaqueType
	for _, n := range names {
		out = append(out, spec.OpaqueType{Name: n, Fact: x.fact(x.source)})
	}
	return out
}

func (x *extractor) enumRows() []spec.Enum {
	var out []spec.Enum
	for _, n := range x.enumOrder {
		e := x.enums[n]
		out = append(out, spec.Enum{Name: e.name, Tag: e.tag, Size: e.size, Values: e.values, Fact: x.fact(x.source)})
	}
	return out
}

// structRow is the [[struct]] row of a struct read by structAt.
func (x *extractor) structRow(s *xStruct) *spec.Struct {
	st := &spec.Struct{}
	x.fillRow(st, s)
	return st
}

// rowFor is structRow for a row written at once and then dropped
// (extractAll's): the worker's one row, refilled, whose member lists keep
// their room from struct to struct. Fresh lists per struct were half of
// what extract --all allocated on a member-dense object (the synthetic
// one: 1.3 GB a run, docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07).
// The row is valid until the next rowFor.
func (x *extractor) rowFor(s *xStruct) *spec.Struct {
	if x.row == nil || freshStructLists {
		x.row = &spec.Struct{}
	}
	x.fillRow(x.row, s)
	return x.row
}

// fillRow makes st the row of s, reusing st's member lists' room.
func (x *extractor) fillRow(st *spec.Struct, s *xStruct) {
	// What the lists held past their new length stays unread (and alive:
	// names and spellings the graph and the spelling memo hold anyway).
	fields, opaque := st.Fields[:0], st.Opaque[:0]
	if plantStaleRow {
		fields = st.Fields
	}
	*st = spec.Struct{Name: s.name, Tag: s.tag, Size: int(s.size), Packed: s.packed,
		Fact: spec.Fact{Conf: x.conf, Source: x.dieSource(s.die), Note: s.note}}
	if !s.packed && s.align > 1 {
		st.MinAlign = int(s.align)
	}
	if len(s.fields) > 0 {
		st.Fields = slices.Grow(fields, len(s.fields))
	}
	if len(s.opaque) > 0 {
		st.Opaque = slices.Grow(opaque, len(s.opaque))
	}
	for _, f := range s.fields {
		st.Fields = append(st.Fields, spec.Field{Name: f.name, Offset: int(f.offset), Type: f.typ, Fact: spec.Fact{Conf: x.conf, Source: "DWARF", Note: f.note}})
	}
	for _, o := range s.opaque {
		st.Opaque = append(st.Opaque, spec.Opaque{Offset: int(o.offset), Size: int(o.end - o.offset), Covers: o.covers, Fact: x.fact("DWARF")})
	}
}

// write renders the fragment as a spec file.
func (f *fragment) write(w io.Writer) error {
	if _, err := io.WriteString(w, f.header); err != nil {
		return err
	}
	sw := &spec.Writer{W: w}
	for _, o := range f.Opaques {
		sw.OpaqueType(o)
	}
	for _, e := range f.Enums {
		sw.Enum(e)
	}
	for _, n := range f.Skipped {
		sw.Comment("skipped: " + n)
	}
	for _, n := range f.Refused {
		sw.Comment("not extracted: " + n)
	}
	for _, st := range f.Structs {
		sw.Struct(st)
	}
	return sw.Err()
}

// dieSource is a fact's source: the input, and the DIE (in the part of the
// DWARF that holds it, when that is not the main debug file).
func (x *extractor) dieSource(off dwarf.Offset) string {
	path, local := x.g.Where(off)
	if path != x.mainDebug {
		return fmt.Sprintf("%s, DIE %#x of %s", x.source, local, path)
	}
	return fmt.Sprintf("%s, DIE %#x", x.source, local)
}
