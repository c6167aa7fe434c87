package spec

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Quote renders s as a TOML basic string.
func Quote(s string) string {
	if plainString(s) {
		// Nothing to escape: one allocation (extract --all quotes a few
		// strings per field of every struct of a library).
		return `"` + s + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// plainString: s is printable ASCII without '"' or '\\', which Quote
// copies as it is.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Writer renders spec rows as TOML in the style of the hand-written files,
// for tools that produce specs (nrtabi release new).
type Writer struct {
	W   io.Writer
	err error
	// sw is W as an io.StringWriter, found at the first write (W is
	// not changed after it): put's io.WriteString asked W for it on
	// every string, a tenth of extract --all's CPU on a library with
	// millions of members (docs/benchmarks.md#less-fresh-memory-per-die).
	sw io.StringWriter
	// lastFact: factIn's rendering of the last conf and source.
	lastFact factLines
	// row: the room where Struct builds a field's first lines and putQ a
	// quoted string.
	row []byte
}

// factLines is a fact's conf and source lines, rendered after indent.
type factLines struct {
	indent, source, text string
	conf                 Conf
}

func (w *Writer) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.W, format, args...)
	}
}

// put writes strings as they are: the rows of every field of every struct
// (nrtabi extract --all) without fmt's cost.
func (w *Writer) put(ss ...string) {
	if w.sw == nil {
		if sw, ok := w.W.(io.StringWriter); ok {
			w.sw = sw
		} else {
			w.sw = plainWriter{w.W}
		}
	}
	for _, s := range ss {
		if w.err != nil {
			return
		}
		_, w.err = w.sw.WriteString(s)
	}
}

// putBytes writes b as it is.
func (w *Writer) putBytes(b []byte) {
	if w.err == nil {
		_, w.err = w.W.Write(b)
	}
}

// appendQ appends s as Quote renders it, without building the quoted copy
// when there is nothing to escape.
func appendQ(b []byte, s string) []byte {
	if plainString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return append(b, Quote(s)...)
}

// plainWriter writes strings to a writer that takes only bytes.
type plainWriter struct{ w io.Writer }

func (p plainWriter) WriteString(s string) (int, error) { return p.w.Write([]byte(s)) }

// putQ writes s as Quote renders it (appendQ, in the writer's room).
func (w *Writer) putQ(s string) {
	w.row = appendQ(w.row[:0], s)
	w.putBytes(w.row)
}

// Err is the first write error.
func (w *Writer) Err() error { return w.err }

// Comment writes comment lines.
func (w *Writer) Comment(text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		w.printf("# %s\n", l)
	}
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func hexU(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func (w *Writer) fact(f Fact) { w.factIn("", f) }

// factIn writes a fact's keys, each line after indent.
func (w *Writer) factIn(indent string, f Fact) {
	// The conf and source lines of the last fact are kept rendered:
	// extract --all writes the same two for every field of a library.
	if k := w.lastFact; k.text == "" || k.indent != indent || k.conf != f.Conf || k.source != f.Source {
		var b strings.Builder
		b.WriteString(indent + "conf = " + Quote(string(f.Conf)) + "\n")
		b.WriteString(indent + "source = " + Quote(f.Source) + "\n")
		w.lastFact = factLines{indent: indent, conf: f.Conf, source: f.Source, text: b.String()}
	}
	w.put(w.lastFact.text)
	if f.Note != "" {
		w.printf("%snote = %s\n", indent, Quote(f.Note))
	}
	if len(f.ConfFields) > 0 {
		keys := make([]string, 0, len(f.ConfFields))
		for k := range f.ConfFields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + " = " + Quote(f.ConfFields[k])
		}
		w.printf("%sconf_fields = { %s }\n", indent, strings.Join(parts, ", "))
	}
	if len(f.Carried) > 0 {
		w.printf("%scarried = %s\n", indent, quoteList(f.Carried))
	}
	if f.CarriedFrom != "" {
		w.printf("%scarried_from = %s\n", indent, Quote(f.CarriedFrom))
	}
}

func (w *Writer) params(ps []Param) {
	if len(ps) == 0 {
		w.printf("params = []\n")
		return
	}
	w.printf("params = [\n")
	for _, p := range ps {
		note := ""
		if p.Note != "" {
			note = ", note = " + Quote(p.Note)
		}
		w.printf("  { name = %s, type = %s%s },\n", Quote(p.Name), Quote(p.Type), note)
	}
	w.printf("]\n")
}

// Release writes [release] and its library tables (those read from a file or
// naming a file or SONAME).
func (w *Writer) Release(r Release) {
	w.printf("[release]\nname = %s\n", Quote(r.Name))
	if r.DerivedFrom != "" {
		w.printf("derived_from = %s\n", Quote(r.DerivedFrom))
	}
	if r.RuntimeVersion != "" {
		w.printf("runtime_version = %s\n", Quote(r.RuntimeVersion))
	}
	if r.CollectivesVersion != "" {
		w.printf("collectives_version = %s\n", Quote(r.CollectivesVersion))
	}
	if len(r.CarriedOver) > 0 {
		w.printf("carried_over = [\n")
		for _, c := range r.CarriedOver {
			w.printf("  %s,\n", Quote(c))
		}
		w.printf("]\n")
	}
	w.fact(r.Fact)
	for _, l := range r.libraries() {
		if !l.lib.written() {
			continue
		}
		w.printf("\n[release.%s]\n", l.key)
		for _, kv := range [][2]string{{"package", l.lib.Package}, {"file", l.lib.File}, {"soname", l.lib.SONAME}, {"build_id", l.lib.BuildID}, {"git", l.lib.Git}, {"dwarf", l.lib.DWARF}} {
			if kv[1] != "" {
				w.printf("%s = %s\n", kv[0], Quote(kv[1]))
			}
		}
		if len(l.lib.Needed) > 0 {
			w.printf("needed = %s\n", quoteList(l.lib.Needed))
		}
		if len(l.lib.VersionNeeds) > 0 {
			var parts []string
			for _, n := range l.lib.VersionNeeds {
				parts = append(parts, fmt.Sprintf("{ file = %s, version = %s, index = %d }", Quote(n.File), Quote(n.Version), n.Index))
			}
			w.printf("version_need = [%s]\n", strings.Join(parts, ", "))
		}
		if len(l.lib.Objects) > 0 {
			w.printf("object = [\n")
			for _, o := range l.lib.Objects {
				bound := ""
				if o.Bound {
					bound = ", bound = true"
				}
				w.printf("  { name = %s, addr = %s, slots = %d%s },\n", Quote(o.Name), hexU(o.Addr), o.Slots, bound)
			}
			w.printf("]\n")
		}
		w.fact(l.lib.Fact)
	}
	if r.Headers.Written() {
		w.Headers(r.Headers)
	}
}

// Headers writes [release.headers], the compile provenance of a release made
// from a header tree (docs/spec-format.md#header-provenance). Release calls
// it; it is exported for tools that write the table on its own.
func (w *Writer) Headers(h Headers) {
	w.printf("\n[release.%s]\ntree = %s\n", headersKey, Quote(h.Tree))
	for _, kv := range []struct {
		key  string
		list []string
	}{{"prelude", h.Prelude}, {"include", h.Include}, {"include_dirs", h.IncludeDirs}, {"cflags", h.CFlags}, {"order", h.Order}} {
		if kv.list != nil {
			w.printf("%s = %s\n", kv.key, quoteList(kv.list))
		}
	}
	w.fact(h.Fact)
}

// Counts writes [counts].
func (w *Writer) Counts(c Counts) {
	w.printf("\n[counts]\nforward = %d\nreverse_nec = %d\nreverse_nrt = %d\n", c.Forward, c.ReverseNEC, c.ReverseNRT)
	w.fact(c.Fact)
}

// SlotTable writes [slot_table].
func (w *Writer) SlotTable(t SlotTable) {
	w.printf("\n[slot_table]\nbase = %s\ntop = %s\nstride = %d\n", hexU(t.Base), hexU(t.Top), t.Stride)
	for _, kv := range [][2]string{{"order", t.Order}, {"sentinel", t.Sentinel}} {
		if kv[1] != "" {
			w.printf("%s = %s\n", kv[0], Quote(kv[1]))
		}
	}
	if t.SentinelAddr != 0 {
		w.printf("sentinel_addr = %s\n", hexU(t.SentinelAddr))
	}
	if t.NetHandleAddr != 0 {
		w.printf("net_handle_addr = %s\n", hexU(t.NetHandleAddr))
	}
	for _, kv := range [][2]string{{"library", t.Library}, {"net_library", t.NetLibrary}, {"net_probe", t.NetProbe}} {
		if kv[1] != "" {
			w.printf("%s = %s\n", kv[0], Quote(kv[1]))
		}
	}
	w.fact(t.Fact)
}

// VersionNode writes one [[version_node]].
func (w *Writer) VersionNode(n VersionNode) {
	w.printf("\n[[version_node]]\nname = %s\nindex = %d\n", Quote(n.Name), n.Index)
	if n.Base {
		w.printf("base = true\n")
	}
	if n.Parent != "" {
		w.printf("parent = %s\n", Quote(n.Parent))
	}
	if n.Binds != "" {
		w.printf("binds = %s\n", Quote(n.Binds))
	}
	w.fact(n.Fact)
}

// Forward writes one [[forward]].
func (w *Writer) Forward(f Forward) {
	w.printf("\n[[forward]]\nindex = %d\nname = %s\n", f.Index, Quote(f.Name))
	if f.NCCOMAddr != 0 {
		w.printf("nccom_addr = %s\n", hexU(f.NCCOMAddr))
	}
	w.printf("slot = %s\ntrampoline = %s\n", hexU(f.Slot), Quote(f.Trampoline))
	if f.TrampolineAddr != 0 {
		w.printf("trampoline_addr = %s\n", hexU(f.TrampolineAddr))
	}
	w.printf("group = %s\nguard = %s\nreturns = %s\n", Quote(f.Group), Quote(f.Guard), Quote(f.Returns))
	w.params(f.Params)
	w.fact(f.Fact)
}

// Reverse writes one [[reverse]].
func (w *Writer) Reverse(r Reverse) {
	w.printf("\n[[reverse]]\nname = %s\nversion = %s\n", Quote(r.Name), Quote(r.Version))
	if r.Addr != 0 {
		w.printf("addr = %s\n", hexU(r.Addr))
	}
	w.printf("group = %s\nshape = %s\n", Quote(r.Group), Quote(r.Shape))
	if r.Target != "" {
		w.printf("target = %s\n", Quote(r.Target))
	}
	if len(r.TargetArgs) > 0 {
		w.printf("target_args = %s\n", quoteList(r.TargetArgs))
	}
	if len(r.Reenters) > 0 {
		w.printf("reenters = %s\n", quoteList(r.Reenters))
	}
	w.printf("returns = %s\n", Quote(r.Returns))
	w.params(r.Params)
	w.fact(r.Fact)
}

// Constant writes one [[constant]].
func (w *Writer) Constant(c Constant) {
	w.printf("\n[[constant]]\nname = %s\ntype = %s\n", Quote(c.Name), Quote(c.Type))
	if s, ok := c.Str(); ok {
		w.printf("value = %s\n", Quote(s))
	} else {
		v, _ := c.Int()
		w.printf("value = %d\n", v)
	}
	w.fact(c.Fact)
}

// Message writes one [[message]].
func (w *Writer) Message(m Message) {
	w.printf("\n[[message]]\nid = %s\nwhere = %s\ntext = %s\nargs = %s\n", Quote(m.ID), Quote(m.Where), Quote(m.Text), quoteList(m.Args))
	w.fact(m.Fact)
}

// Remove writes a [remove] table.
func (w *Writer) Remove(kinds map[string][]string) {
	if len(kinds) == 0 {
		return
	}
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w.printf("\n[remove]\n")
	for _, k := range keys {
		w.printf("%s = %s\n", k, quoteList(kinds[k]))
	}
}

// OpaqueType writes one [[opaque_type]].
func (w *Writer) OpaqueType(o OpaqueType) {
	w.printf("\n[[opaque_type]]\nname = %s\n", Quote(o.Name))
	if o.Tag != "" {
		w.printf("tag = %s\n", Quote(o.Tag))
	}
	w.fact(o.Fact)
}

// Enum writes one [[enum]].
func (w *Writer) Enum(e Enum) {
	w.printf("\n[[enum]]\nname = %s\n", Quote(e.Name))
	if e.Tag != "" {
		w.printf("tag = %s\n", Quote(e.Tag))
	}
	w.printf("size = %d\n", e.Size)
	if e.Status {
		w.printf("status = true\n")
	}
	if e.Partial {
		w.printf("partial = true\n")
	}
	w.fact(e.Fact)
	w.printf("values = [\n")
	for _, v := range e.Values {
		extra := ""
		if v.AliasOf != "" {
			extra += ", alias_of = " + Quote(v.AliasOf)
		}
		if v.Conf != "" {
			extra += ", conf = " + Quote(string(v.Conf))
		}
		if v.Note != "" {
			extra += ", note = " + Quote(v.Note)
		}
		w.printf("  { name = %s, value = %d%s },\n", Quote(v.Name), v.Value, extra)
	}
	w.printf("]\n")
}

// Struct writes one [[struct]] with its fields and opaque ranges, indented
// as in the hand-written files.
func (w *Writer) Struct(s *Struct) {
	w.printf("\n[[struct]]\nname = %s\n", Quote(s.Name))
	if s.Tag != "" {
		w.printf("tag = %s\n", Quote(s.Tag))
	}
	if len(s.Aliases) > 0 {
		w.printf("aliases = %s\n", quoteList(s.Aliases))
	}
	w.printf("size = %d\n", s.Size)
	if s.Packed {
		w.printf("packed = true\n")
	} else if s.MinAlign > 1 {
		w.printf("align = %d\n", s.MinAlign)
	}
	if s.Prefix {
		w.printf("prefix = true\n")
	}
	if s.Side != "" {
		w.printf("side = %s\n", Quote(s.Side))
	}
	w.fact(s.Fact)
	// Row facts of fields are written indented under their struct.
	s.EachMember(func(m Member) {
		if f := m.Field; f != nil {
			// A field's first lines go out in one write (extract --all
			// writes millions of them: a write per string was a third of
			// its writing, docs/benchmarks.md#fewer-waits-and-less-garbage-2026-12-07).
			b := append(w.row[:0], "\n  [[struct.field]]\n  name = "...)
			b = appendQ(b, f.Name)
			b = append(b, "\n  offset = "...)
			b = strconv.AppendInt(b, int64(f.Offset), 10)
			b = append(b, "\n  type = "...)
			b = appendQ(b, f.Type)
			b = append(b, '\n')
			w.row = b
			w.putBytes(b)
			if f.Size != 0 {
				w.printf("  size = %d\n", f.Size)
			}
			if f.Was != "" {
				w.printf("  was = %s\n", Quote(f.Was))
			}
			if len(f.Range) > 0 {
				w.printf("  range = [%s]\n", joinInts(f.Range))
			}
			w.factIn("  ", f.Fact)
			return
		}
		o := m.Opaque
		w.put("\n  [[struct.opaque]]\n  offset = ", strconv.Itoa(o.Offset), "\n  size = ", strconv.Itoa(o.Size), "\n")
		if len(o.Covers) > 0 {
			w.printf("  covers = %s\n", quoteList(o.Covers))
		}
		w.factIn("  ", o.Fact)
	})
	for _, a := range s.Absent {
		w.AbsentField(a)
	}
}

// AbsentField writes one [[struct.absent]] row, indented under the struct
// Struct is writing (docs/spec-format.md#absent-fields).
func (w *Writer) AbsentField(a AbsentField) {
	w.put("\n  [[struct.absent]]\n  name = ")
	w.putQ(a.Name)
	w.put("\n  type = ")
	w.putQ(a.Type)
	w.put("\n")
	w.factIn("  ", a.Fact)
}

// Contradiction writes one [[contradiction]].
func (w *Writer) Contradiction(c Contradiction) {
	w.printf("\n[[contradiction]]\nid = %s\ntopic = %s\nclaims = [\n", Quote(c.ID), Quote(c.Topic))
	for _, cl := range c.Claims {
		w.printf("  %s,\n", Quote(cl))
	}
	w.printf("]\nchosen = %s\n", Quote(c.Chosen))
	w.fact(c.Fact)
}

// Extension writes one [[extension]].
func (w *Writer) Extension(e Extension) {
	w.printf("\n[[extension]]\nid = %s\ntopic = %s\nseed = %s\nours = %s\nreason = %s\n",
		Quote(e.ID), Quote(e.Topic), Quote(e.Seed), Quote(e.Ours), Quote(e.Reason))
	w.fact(e.Fact)
}

// LinkBehaviour writes one [[link_behaviour]].
func (w *Writer) LinkBehaviour(l LinkBehaviour) {
	w.printf("\n[[link_behaviour]]\nvariant = %s\n", Quote(l.Variant))
	for _, kv := range [][2]string{{"libnrt", l.LibNRT}, {"outcome", l.Outcome}, {"message", l.Message}, {"glibc", l.Glibc}} {
		if kv[1] != "" {
			w.printf("%s = %s\n", kv[0], Quote(kv[1]))
		}
	}
	w.fact(l.Fact)
}

// Spec writes every table of s, kind by kind, as one file: a derived
// release comes out whole, with the rows it inherits.
func (w *Writer) Spec(s *Spec) {
	for _, k := range kinds {
		k.write(w, s)
	}
}

func joinInts(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, ", ")
}
