package spec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// kinds is the one list of the tables a spec file may hold. The decoder's
// document type, the position of every row, derivation and [remove], the
// provenance and row-key checks, fragments, the JSON view and the writer
// all walk it, so a kind added here is added everywhere, and nowhere else.
// The order is the order of the JSON view and of a written spec.
var kinds = []kind{
	table[Release]{
		name: "release", get: func(s *Spec) *Release { return &s.Release }, fact: func(r *Release) *Fact { return &r.Fact },
		nested: func(r *Release) []nestedFact {
			var out []nestedFact
			for _, l := range r.libraries() {
				out = append(out, nestedFact{key: l.key, fact: &l.lib.Fact, what: "[release." + l.key + "]"})
			}
			return append(out, nestedFact{key: headersKey, fact: &r.Headers.Fact, what: "[release." + headersKey + "]"})
		},
		inherit: func(child, parent *Release) {
			// A library table the child leaves out is the parent's, and
			// says so: its build-id and git describe the parent's binary
			// (OwnGit), whatever the child's files state.
			pl := parent.libraries()
			for i, l := range child.libraries() {
				if l.lib.Pos.File == "" {
					*l.lib = *pl[i].lib
					if l.lib.written() && l.lib.CarriedFrom == "" {
						l.lib.CarriedFrom = parent.Name
					}
				}
			}
		},
		json: "release", toView: viewRelease, toTOML: (*Writer).Release,
	},
	rows[VersionNode]{
		name: "version_node", noun: "version node", keyName: "name", get: func(s *Spec) *[]VersionNode { return &s.VersionNodes },
		rowKey: func(n *VersionNode) string { return n.Name }, fact: func(n *VersionNode) *Fact { return &n.Fact },
		json: "version_nodes", toView: viewVersionNodes, toTOML: (*Writer).VersionNode,
	},
	table[SlotTable]{
		name: "slot_table", get: func(s *Spec) *SlotTable { return &s.SlotTable }, fact: func(t *SlotTable) *Fact { return &t.Fact },
		json: "slot_table", toView: viewSlotTable, toTOML: (*Writer).SlotTable,
	},
	table[Counts]{
		name: "counts", get: func(s *Spec) *Counts { return &s.Counts }, fact: func(c *Counts) *Fact { return &c.Fact },
		toTOML: (*Writer).Counts,
	},
	rows[Forward]{
		name: "forward", noun: "forward symbol", keyName: "name", get: func(s *Spec) *[]Forward { return &s.Forward },
		rowKey: func(f *Forward) string { return f.Name }, fact: func(f *Forward) *Fact { return &f.Fact },
		own:  func(f *Forward) { f.Params = slices.Clone(f.Params) },
		json: "forward", toView: viewForward, toTOML: (*Writer).Forward,
	},
	rows[Reverse]{
		name: "reverse", noun: "reverse symbol", keyName: "name", get: func(s *Spec) *[]Reverse { return &s.Reverse },
		rowKey: func(r *Reverse) string { return r.Name }, fact: func(r *Reverse) *Fact { return &r.Fact },
		own:  func(r *Reverse) { r.Params = slices.Clone(r.Params) },
		json: "reverse", toView: viewReverse, toTOML: (*Writer).Reverse,
	},
	rows[Constant]{
		name: "constant", noun: "constant", keyName: "name", get: func(s *Spec) *[]Constant { return &s.Constants },
		rowKey: func(c *Constant) string { return c.Name }, fact: func(c *Constant) *Fact { return &c.Fact },
		json: "constants", toView: viewConstants, toTOML: (*Writer).Constant,
	},
	rows[Enum]{
		name: "enum", noun: "enum", keyName: "name", get: func(s *Spec) *[]Enum { return &s.Enums },
		rowKey: func(e *Enum) string { return e.Name }, fact: func(e *Enum) *Fact { return &e.Fact },
		inFragment: true, json: "enums", toView: viewEnums, toTOML: (*Writer).Enum,
	},
	rows[OpaqueType]{
		name: "opaque_type", noun: "opaque type", keyName: "name", get: func(s *Spec) *[]OpaqueType { return &s.OpaqueTypes },
		rowKey: func(o *OpaqueType) string { return o.Name }, fact: func(o *OpaqueType) *Fact { return &o.Fact },
		inFragment: true, toTOML: (*Writer).OpaqueType,
	},
	rows[Message]{
		name: "message", noun: "message", keyName: "id", get: func(s *Spec) *[]Message { return &s.Messages },
		rowKey: func(m *Message) string { return m.ID }, fact: func(m *Message) *Fact { return &m.Fact },
		json: "messages", toView: viewMessages, toTOML: (*Writer).Message,
	},
	rows[*Struct]{
		name: "struct", noun: "struct", keyName: "name", get: func(s *Spec) *[]*Struct { return &s.Structs },
		rowKey: func(st **Struct) string { return (*st).Name }, fact: func(st **Struct) *Fact { return &(*st).Fact },
		nested: func(p **Struct) []nestedFact {
			st := *p
			var out []nestedFact
			for j := range st.Fields {
				out = append(out, nestedFact{key: fmt.Sprintf("field[%d]", j), fact: &st.Fields[j].Fact, what: st.Name + "." + st.Fields[j].Name})
			}
			for j := range st.Opaque {
				// An opaque range says that nothing is known of its bytes:
				// it has a position but is not held to the provenance rules.
				out = append(out, nestedFact{key: fmt.Sprintf("opaque[%d]", j), fact: &st.Opaque[j].Fact, unchecked: true})
			}
			for j := range st.Absent {
				out = append(out, nestedFact{key: fmt.Sprintf("absent[%d]", j), fact: &st.Absent[j].Fact, what: st.Name + "." + st.Absent[j].Name + " (absent)"})
			}
			return out
		},
		own: func(p **Struct) {
			st := **p
			st.Fields, st.Opaque, st.Absent = slices.Clone(st.Fields), slices.Clone(st.Opaque), slices.Clone(st.Absent)
			*p = &st
		},
		ownUnique:  true, // names, tags and aliases share one namespace: checker.structs
		inFragment: true, json: "structs", toView: viewStructs,
		toTOML: (*Writer).Struct,
	},
	rows[Contradiction]{
		name: "contradiction", noun: "contradiction", keyName: "id", get: func(s *Spec) *[]Contradiction { return &s.Contradictions },
		rowKey: func(c *Contradiction) string { return c.ID }, fact: func(c *Contradiction) *Fact { return &c.Fact },
		json: "contradictions", toView: func(s *Spec) any { return s.Contradictions }, toTOML: (*Writer).Contradiction,
	},
	rows[Extension]{
		name: "extension", noun: "extension", keyName: "id", get: func(s *Spec) *[]Extension { return &s.Extensions },
		rowKey: func(e *Extension) string { return e.ID }, fact: func(e *Extension) *Fact { return &e.Fact },
		json: "extensions", toView: func(s *Spec) any { return s.Extensions }, toTOML: (*Writer).Extension,
	},
	rows[LinkBehaviour]{
		name: "link_behaviour", noun: "link behaviour", keyName: "variant", get: func(s *Spec) *[]LinkBehaviour { return &s.LinkBehaviours },
		rowKey: func(l *LinkBehaviour) string { return l.Variant }, fact: func(l *LinkBehaviour) *Fact { return &l.Fact },
		toTOML: (*Writer).LinkBehaviour,
	},
}

// removeKey is the table of a derived release that drops parent rows:
// under it, each row kind's key lists the row keys to drop.
const removeKey = "remove"

// kind is one table key of a spec file: a single [table] or [[rows]].
type kind interface {
	key() string
	// field is the document field the decoder fills for the key.
	field() reflect.StructField
	// add takes a decoded file's value of the field into s, placing every
	// fact at its position in the file.
	add(s *Spec, v reflect.Value, in fileIndex) Errors
	// merge lays child over parent into out; keep says whether a parent
	// row not restated by the child survives [remove].
	merge(out, parent, child *Spec, keep func(kindKey, rowKey string) bool)
	// facts visits every fact of the kind with the words that name it.
	facts(s *Spec, visit func(f *Fact, what string))
	// unique reports a row key written twice.
	unique(c *checker)
	present(s *Spec) bool
	single() bool   // a [table] once per release (required in a full spec), not [[rows]] that [remove] can drop
	fragment() bool // may appear in a struct fragment (nrtabi extract)
	// view is the kind's part of the JSON view; "" when it has none.
	view(s *Spec) (string, any)
	write(w *Writer, s *Spec)
	// fromRows is the document field's value for the rows of a file built
	// in memory (File), as the decoder would have filled it.
	fromRows(part *Spec) reflect.Value
	// writeRows writes what a file built in memory holds of the kind.
	writeRows(w *Writer, part *Spec)
}

// nestedFact is a table inside a row or table that carries a fact of its
// own (release.libnrt, struct.field[3]).
type nestedFact struct {
	key       string
	fact      *Fact
	what      string // how messages name it
	unchecked bool
}

// fileIndex places the facts of one file.
type fileIndex struct {
	name string
	idx  *posIndex
}

// at gives a row its key path and position (the file, if the path is not indexed).
func (in fileIndex) at(f *Fact, path string) {
	f.Path = path
	f.Pos, _ = in.idx.lookup(path)
	if f.Pos.File == "" {
		f.Pos = Pos{File: in.name}
	}
}

// nested places the nested tables that are written; an absent one keeps no
// position and is not held to the provenance rules.
func (in fileIndex) nested(ns []nestedFact, base string) {
	for _, n := range ns {
		p := base + "." + n.key
		if _, ok := in.idx.find(p); ok {
			in.at(n.fact, p)
		}
	}
}

// visitNested visits the nested facts held to the provenance rules.
func visitNested(ns []nestedFact, visit func(*Fact, string)) {
	for _, n := range ns {
		if !n.unchecked {
			visit(n.fact, n.what)
		}
	}
}

// table is a kind written once per release: [release], [counts], [slot_table].
type table[T any] struct {
	name    string
	get     func(*Spec) *T
	fact    func(*T) *Fact
	nested  func(*T) []nestedFact
	inherit func(child, parent *T) // what a restated table still takes from the parent's
	json    string
	toView  func(*Spec) any
	toTOML  func(*Writer, T)
}

func (t table[T]) key() string { return t.name }

func (t table[T]) field() reflect.StructField {
	return reflect.StructField{Name: goName(t.name), Type: reflect.TypeOf((*T)(nil)), Tag: reflect.StructTag(`toml:"` + t.name + `"`)}
}

func (t table[T]) add(s *Spec, v reflect.Value, in fileIndex) Errors {
	if v.IsNil() {
		return nil
	}
	dst := t.get(s)
	var errs Errors
	if first := t.fact(dst).Pos; first.File != "" {
		p, _ := in.idx.lookup(t.name)
		errs = Errors{{Pos: p, Rule: "single-table", Msg: fmt.Sprintf("[%s] is already defined at %s; define it in one file", t.name, first)}}
	}
	*dst = *v.Interface().(*T)
	in.at(t.fact(dst), t.name)
	if t.nested != nil {
		in.nested(t.nested(dst), t.name)
	}
	return errs
}

func (t table[T]) merge(out, parent, child *Spec, _ func(string, string) bool) {
	o, c := t.get(out), t.get(child)
	*o = *t.get(parent)
	if t.fact(c).Pos.File != "" {
		*o = *c
		if t.inherit != nil {
			t.inherit(o, t.get(parent))
		}
	}
}

func (t table[T]) facts(s *Spec, visit func(*Fact, string)) {
	x := t.get(s)
	visit(t.fact(x), "["+t.name+"]")
	if t.nested != nil {
		visitNested(t.nested(x), visit)
	}
}

func (t table[T]) fromRows(part *Spec) reflect.Value {
	v := t.get(part)
	if reflect.ValueOf(v).Elem().IsZero() {
		return reflect.Zero(reflect.TypeOf(v))
	}
	c := *v
	return reflect.ValueOf(&c)
}

func (t table[T]) writeRows(w *Writer, part *Spec) {
	if v := t.get(part); !reflect.ValueOf(v).Elem().IsZero() {
		t.toTOML(w, *v)
	}
}

func (t table[T]) unique(*checker)            {}
func (t table[T]) present(s *Spec) bool       { return t.fact(t.get(s)).Pos.File != "" }
func (t table[T]) single() bool               { return true }
func (t table[T]) fragment() bool             { return false }
func (t table[T]) view(s *Spec) (string, any) { return viewOf(t.json, t.toView, s) }

func (t table[T]) write(w *Writer, s *Spec) {
	if t.present(s) {
		t.toTOML(w, *t.get(s))
	}
}

// rows is a kind of [[rows]], identified across releases by a row key.
type rows[T any] struct {
	name    string
	noun    string // what one row is called in messages
	keyName string // the key holding the row key
	get     func(*Spec) *[]T
	rowKey  func(*T) string
	fact    func(*T) *Fact
	nested  func(*T) []nestedFact
	// own copies what the loader writes into a row (its and its nested
	// facts' positions, its bound types) out of memory the row shares with
	// where it came from: a File's rows are often a loaded release's, and
	// a compiled release's rows are static data every compiled.Load shares.
	own        func(*T)
	ownUnique  bool // the row key is checked by a rule of the kind's own
	inFragment bool
	json       string
	toView     func(*Spec) any
	toTOML     func(*Writer, T)
}

func (r rows[T]) key() string { return r.name }

func (r rows[T]) field() reflect.StructField {
	return reflect.StructField{Name: goName(r.name), Type: reflect.TypeOf([]T(nil)), Tag: reflect.StructTag(`toml:"` + r.name + `"`)}
}

func (r rows[T]) add(s *Spec, v reflect.Value, in fileIndex) Errors {
	got := v.Interface().([]T)
	for i := range got {
		p := fmt.Sprintf("%s[%d]", r.name, i)
		in.at(r.fact(&got[i]), p)
		if r.nested != nil {
			in.nested(r.nested(&got[i]), p)
		}
	}
	dst := r.get(s)
	*dst = append(*dst, got...)
	return nil
}

func (r rows[T]) merge(out, parent, child *Spec, keep func(string, string) bool) {
	*r.get(out) = overlay(*r.get(parent), *r.get(child), r.rowKey, func(k string) bool { return keep(r.name, k) })
}

func (r rows[T]) facts(s *Spec, visit func(*Fact, string)) {
	xs := *r.get(s)
	for i := range xs {
		visit(r.fact(&xs[i]), r.noun+" "+r.rowKey(&xs[i]))
		if r.nested != nil {
			visitNested(r.nested(&xs[i]), visit)
		}
	}
}

func (r rows[T]) unique(c *checker) {
	if r.ownUnique {
		return
	}
	xs := *r.get(c.s)
	c.uniq(r.noun, len(xs), func(i int) (string, *Fact, string) { return r.rowKey(&xs[i]), r.fact(&xs[i]), r.keyName })
}

func (r rows[T]) fromRows(part *Spec) reflect.Value {
	out := append([]T(nil), *r.get(part)...)
	if r.own != nil {
		for i := range out {
			r.own(&out[i])
		}
	}
	return reflect.ValueOf(out)
}

func (r rows[T]) writeRows(w *Writer, part *Spec) { r.write(w, part) }

func (r rows[T]) present(s *Spec) bool       { return len(*r.get(s)) > 0 }
func (r rows[T]) single() bool               { return false }
func (r rows[T]) fragment() bool             { return r.inFragment }
func (r rows[T]) view(s *Spec) (string, any) { return viewOf(r.json, r.toView, s) }

func (r rows[T]) write(w *Writer, s *Spec) {
	for _, x := range *r.get(s) {
		r.toTOML(w, x)
	}
}

func viewOf(key string, fn func(*Spec) any, s *Spec) (string, any) {
	if fn == nil {
		return "", nil
	}
	return key, fn(s)
}

// goName is the exported Go name of a TOML key: version_node -> VersionNode.
func goName(key string) string {
	var b strings.Builder
	for _, part := range strings.Split(key, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// fileDocType is what one spec file may hold: a field per kind, in the
// order of kinds, then [remove] with a list per kind of rows.
var fileDocType = sync.OnceValue(func() reflect.Type {
	var fields, removal []reflect.StructField
	for _, k := range kinds {
		fields = append(fields, k.field())
	}
	for _, k := range removable() {
		removal = append(removal, reflect.StructField{Name: goName(k.key()), Type: reflect.TypeOf([]string(nil)), Tag: reflect.StructTag(`toml:"` + k.key() + `"`)})
	}
	fields = append(fields, reflect.StructField{Name: goName(removeKey), Type: reflect.PointerTo(reflect.StructOf(removal)), Tag: `toml:"` + removeKey + `"`})
	return reflect.StructOf(fields)
})

// removable are the kinds [remove] can drop rows of, in the order of the
// fields of fileDocType's [remove] table.
func removable() []kind {
	var out []kind
	for _, k := range kinds {
		if !k.single() {
			out = append(out, k)
		}
	}
	return out
}

// removal is one [remove] table: the row keys to drop, by kind.
type removal struct {
	pos   Pos
	lists map[string][]string
}

// decodedRemoval reads the [remove] field of a decoded document, if any.
func decodedRemoval(doc reflect.Value, in fileIndex) (removal, bool) {
	v := doc.Field(len(kinds))
	if v.IsNil() {
		return removal{}, false
	}
	r := removal{lists: map[string][]string{}}
	r.pos, _ = in.idx.lookup(removeKey)
	v = v.Elem()
	for i, k := range removable() {
		if names := v.Field(i).Interface().([]string); len(names) > 0 {
			r.lists[k.key()] = names
		}
	}
	return r, true
}
