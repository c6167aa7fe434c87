package layoutcheck

import (
	"fmt"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// CheckStruct compares one struct of a binary's type graph (typemodel, as
// elfread's Types reads it) with its spec struct: the facts of the struct
// and of the structs embedded in it, each once. The list is flat, for a
// view of the one struct (show): consequences are listed after their
// cause, a moved run is one finding per field, and a fact of an embedded
// struct is named by its path in st.
func CheckStruct(st *spec.Struct, l *typemodel.Type) []Finding {
	c := newStructChecker(nil)
	c.grade(st, l)
	var out []Finding
	for _, f := range c.findings(nil) {
		f.Walk(func(x Finding, _ int) {
			x.Consequences = nil
			base := ""
			if x.Struct != st.Name {
				for _, at := range x.EmbeddedIn {
					if rest, ok := strings.CutPrefix(at, st.Name+"."); ok {
						base, x.Struct = rest+".", st.Name
						break
					}
				}
			}
			if len(x.Fields) > 1 {
				for _, name := range x.Fields {
					y := x
					y.Field, y.Fields = base+name, nil
					out = append(out, y)
				}
				return
			}
			x.Field = strings.TrimSuffix(base+x.Field, ".")
			out = append(out, x)
		})
	}
	return out
}

// structChecker grades the structs of one input against the spec through
// package grade, the one grading check and diff share
// (docs/layoutcheck.md#one-grading): the spec side is grade.FromSpec, the
// binary's side is converted from the type graph here.
type structChecker struct {
	sp      *spec.Spec       // for the names of structs and opaque types a pointer or member refers to (nil: none)
	names   *specmatch.Names // sp's names, indexed on first need
	g       *grade.Grader
	layouts map[string]*grade.Layout
	// decl: the first node of each struct name laid out, where its facts
	// are declared (location.go).
	decl map[string]*typemodel.Type
	// found is where the input's spec structs were found (nil: names
	// alone, as for show).
	found specmatch.Found
}

func newStructChecker(sp *spec.Spec) *structChecker {
	return &structChecker{sp: sp, g: grade.New(), layouts: map[string]*grade.Layout{}, decl: map[string]*typemodel.Type{}}
}

func (c *structChecker) grade(st *spec.Struct, l *typemodel.Type) []*grade.Finding {
	return c.g.Grade(grade.FromSpec(st, "spec"), c.layout(st, l, 0))
}

// findings are the facts graded so far, as check reports them; only
// those defined at the named structs when names is not nil.
func (c *structChecker) findings(names map[string]bool) []Finding {
	out := []Finding{}
	for _, f := range c.g.Facts() {
		if names == nil || names[f.Struct] {
			out = append(out, fromGrade(f))
		}
	}
	return out
}

// isFiller reports whether m is the header generator's stand-in for an
// opaque range of st.
func isFiller(st *spec.Struct, m *typemodel.Field) bool {
	return st != nil && strings.HasPrefix(m.Name, spec.OpaqueMemberPrefix) && st.OpaqueHolding(m.Offset, m.End()) != nil
}

// isArray: t is an array under its typedefs and qualifiers.
func isArray(t *typemodel.Type) bool {
	s := typemodel.Strip(t)
	return s != nil && s.Kind == typemodel.Array
}

// layout converts a struct of the type graph into the grading model. st
// is the spec struct it is compared with: a member of the same name whose
// type specmatch finds to be the spec's is spelled as the spec spells it,
// so typedef and tag spellings of one type are one type.
func (c *structChecker) layout(st *spec.Struct, l *typemodel.Type, depth int) *grade.Layout {
	key := fmt.Sprintf("dwarf:%#x", l.Offset)
	if st != nil {
		key += ":" + st.Name
	}
	if g, ok := c.layouts[key]; ok {
		return g
	}
	name := l.Name
	if st != nil {
		name = st.Name
	}
	out := &grade.Layout{Name: name, Key: key, Size: l.Size, Align: typemodel.StructAlign(l)}
	c.layouts[key] = out
	if _, ok := c.decl[name]; !ok {
		c.decl[name] = l
	}
	specField := map[string]*spec.Field{}
	if st != nil {
		for i := range st.Fields {
			specField[st.Fields[i].Name] = &st.Fields[i]
		}
	}
	for i := range l.Fields {
		m := &l.Fields[i]
		size := m.Size()
		last := i == len(l.Fields)-1 && isArray(m.Type)
		if m.Virtual || size == 0 && m.BitSize == 0 && !last || m.Base && emptyClass(m.Type) {
			continue // virtual bases have no fixed offset; zero-length members take no bytes
		}
		gm := grade.Member{Name: m.Name, Offset: m.Offset, Size: size, BitOffset: m.BitOffset, BitSize: m.BitSize, Filler: isFiller(st, m)}
		if m.Base {
			gm.Name = fieldLabel(m)
		}
		var ft *spec.Type
		if f := specField[m.Name]; f != nil && !m.Base {
			ft = f.T
		}
		gm.Type = c.typeOf(m.Type, ft, depth)
		if m.Name == "" && !m.Base {
			for _, in := range anonymousMembers(m, 0) {
				var it *spec.Type
				if f := specField[in.Name]; f != nil {
					it = f.T
				}
				gm.Group = append(gm.Group, grade.Member{Name: in.Name, Offset: in.Offset, Size: in.Size(), Type: c.typeOf(in.Type, it, depth)})
			}
		}
		out.Members = append(out.Members, gm)
	}
	return out
}

// typeOf converts a type of the graph; t is the spec type it is compared
// with, or nil. Display is the one C spelling (typemodel.Spell); Canon is
// the spelling in the spec grammar that nrtabi extract writes for the same
// type, so a file checked against its own fragment compares equal: a type
// the grammar cannot spell (a float, a function, a C++ reference) has
// none, and a pointer to one is void*.
func (c *structChecker) typeOf(d *typemodel.Type, t *spec.Type, depth int) *grade.Type {
	sd := typemodel.Strip(d)
	out := &grade.Type{Size: typemodel.SizeOf(d), Align: typemodel.AlignOf(d), Len: -1, Display: typemodel.Spell(d)}
	if depth > 16 {
		out.Canon = out.Display
		return out
	}
	// The spec's spelling when specmatch says the types agree, except where
	// the spec says only "some pointer" (void* or an opaque pointee): there
	// the pointee's own name is kept, so a new pointee is seen.
	agree := t != nil && c.found.MatchType(t, d, 0) == ""
	if agree && t.Kind == spec.KindPointer {
		if k := t.Elem.Base().Kind; k == spec.KindVoid || k == spec.KindOpaque {
			agree = false
		}
	}
	if t != nil && t.Kind == spec.KindOpaque {
		// specmatch takes any pointee for an opaque type; its name is what
		// tells two apart: the binary's type is the opaque one when it
		// carries that name (a typedef on its way down, or its tag).
		agree = c.namedOpaque(d, t.Name)
	}
	var elemSpec *spec.Type
	if t != nil && (t.Kind == spec.KindPointer || t.Kind == spec.KindArray) {
		elemSpec = t.Elem
	}
	kind := typemodel.Void
	if sd != nil {
		kind = sd.Kind
	}
	switch kind {
	case typemodel.Void:
		out.Kind, out.Canon = grade.TVoid, "void"
	case typemodel.Pointer:
		out.Kind, out.Elem = grade.TPointer, c.typeOf(sd.Elem, elemSpec, depth+1)
		if es := elemSpec; es != nil && es.Kind == spec.KindStruct && es.Struct != nil && out.Elem.Canon != grade.Canon(es) && c.found.StructIs(es.Struct, sd.Elem) {
			// The pointee carries the spec struct's name (a typedef on its
			// way down, or its tag) and is another type here: the units of
			// one library define a typedef differently (libc's _IO_lock_t
			// is a struct in some and void in others), and check reads
			// another copy of the pointer's struct than extract did. The
			// grammar names a type by its name; the pointee's layout is
			// checked where the struct itself is.
			out.Elem.Canon = grade.Canon(es)
		}
		switch e := out.Elem; {
		case e.Kind == grade.TStruct && !spec.IsIdent(e.Canon):
			// A struct the grammar cannot name (a C++ scoped name, an
			// anonymous body): extract covers a pointer to it by an opaque
			// range, and spells a pointer to that pointer void*.
		case e.Kind == grade.TFunc || e.Canon == "":
			out.Canon = "void*" // what nrtabi extract writes for a pointee the grammar cannot spell
		default:
			out.Canon = e.Canon + "*"
		}
	case typemodel.Array:
		out.Kind, out.Elem, out.Len = grade.TArray, c.typeOf(sd.Elem, elemSpec, depth+1), sd.Count
		if sd.Count <= 0 {
			out.Len = -1 // a flexible array member (or [0])
		}
		switch {
		case out.Elem.Canon == "", out.Elem.Kind == grade.TStruct && !spec.IsIdent(out.Elem.Canon):
			// An array of what the grammar cannot spell (a scoped or
			// template name: Go's [4]huff0.bitReaderShifted) has no
			// spelling.
		case out.Len < 0:
			out.Canon = out.Elem.Canon + "[]"
		default:
			out.Canon = fmt.Sprintf("%s[%d]", out.Elem.Canon, out.Len)
		}
	case typemodel.Func:
		out.Kind = grade.TFunc
	case typemodel.Struct, typemodel.Class, typemodel.Union:
		tds := typemodel.Typedefs(d)
		out.Kind = grade.TStruct
		out.Canon = c.structName(sd, tds)
		if sd.Kind != typemodel.Union && (sd.Name != "" || len(tds) > 0) && !sd.Incomplete() {
			var inner *spec.Struct
			if t != nil && t.Kind == spec.KindStruct {
				inner = t.Struct
			}
			if inner == nil && c.sp != nil {
				inner = c.namesOf().ByName(out.Canon)
			}
			out.Struct = func() (*grade.Layout, error) { return c.layout(inner, sd, depth+1), nil }
		}
		// A declaration has no layout here: undescribed, like an opaque type.
	case typemodel.Base, typemodel.Enum:
		out.Kind = grade.TScalar
		out.Canon = scalarCanon(d, sd)
	default:
		// A C++ reference, a pointer to member, decltype(nullptr): no
		// spelling in the grammar (extract covers them by opaque ranges).
		out.Kind = grade.TOther
	}
	switch {
	case agree:
		out.Canon = grade.Canon(t)
	case out.Size > spec.MaxObjectSize:
		// Larger than a spec can spell (extract's bound, spec.MaxObjectSize:
		// the Go runtime's *[1<<49 - 1]uint16): no spelling, so a pointer
		// to it is void*.
		out.Canon = ""
	}
	return out
}

// namedOpaque: d carries the name of the spec's opaque type n, or its tag.
func (c *structChecker) namedOpaque(d *typemodel.Type, n string) bool {
	if specmatch.NamedAs(d, n) {
		return true
	}
	if c.sp != nil {
		for _, o := range c.sp.OpaqueTypes {
			if o.Name == n {
				return specmatch.NamedAs(d, o.CTag())
			}
		}
	}
	return false
}

var intNames = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
		"int8_t": "i8", "int16_t": "i16", "int32_t": "i32", "int64_t": "i64",
		"size_t": "size_t", "ssize_t": "ssize_t", "time_t": "time_t", "uintptr_t": "uintptr_t",
		"pthread_mutex_t": "pthread_mutex_t", "cpu_set_t": "cpu_set_t",
	}
})

// scalarCanon spells a base type or an enum as the spec grammar would
// (grade.Canon's spelling: int as i32), or "" when the grammar has no
// spelling for it (a float, a complex, an integer of 16 bytes).
func scalarCanon(d, sd *typemodel.Type) string {
	size := typemodel.SizeOf(sd)
	tds := typemodel.Typedefs(d)
	for _, n := range tds {
		if b, ok := intNames()[n]; ok {
			if bt, err := spec.ParseType(b); err == nil && int64(bt.Size()) == size {
				return b
			}
		}
	}
	if sd.Kind == typemodel.Enum {
		if len(tds) > 0 {
			return tds[0]
		}
		return sd.Name
	}
	switch {
	case sd.Encoding == typemodel.EncBoolean:
		if size == 1 {
			return "bool"
		}
		return ""
	case sd.Name == "char" && size == 1:
		return "char"
	case !sd.Encoding.Integer():
		return ""
	}
	switch size {
	case 1, 2, 4, 8:
		p := "u"
		if sd.Encoding.Signed() {
			p = "i"
		}
		return fmt.Sprintf("%s%d", p, size*8)
	}
	return ""
}

// namesOf is the checker's spec's names, indexed on first need.
func (c *structChecker) namesOf() *specmatch.Names {
	if c.names == nil {
		c.names = specmatch.NewNames(c.sp)
	}
	return c.names
}

// structName is the spec's name for a struct of the graph when the spec
// has one (a struct or an opaque type), else its typedef or its qualified
// name.
func (c *structChecker) structName(d *typemodel.Type, tds []string) string {
	if c.sp != nil {
		if st := c.namesOf().StructNamed(d.Name, tds); st != nil {
			return st.Name
		}
		if o := c.namesOf().Opaque(d.Name, tds); o != nil {
			return o.Name
		}
	}
	if len(tds) > 0 {
		return tds[0]
	}
	if d.Name == "" {
		return fmt.Sprintf("<anonymous %s of %d B>", d.Kind, d.Size)
	}
	return d.Name
}

// maxAnonymousDepth bounds the anonymous members read through one another.
const maxAnonymousDepth = 8

// anonymousMembers are the named members an unnamed struct or union member
// m makes members of the enclosing struct (C11 6.7.2.1p13), at their offsets
// in it, through nested anonymous members too. Bitfields are left to the
// anonymous member: their offsets need the bit arithmetic of the reader.
func anonymousMembers(m *typemodel.Field, depth int) []typemodel.Field {
	st := typemodel.Strip(m.Type)
	if st == nil || !st.Kind.Aggregate() || st.Name != "" || depth >= maxAnonymousDepth || m.BitSize != 0 {
		return nil
	}
	var out []typemodel.Field
	for i := range st.Fields {
		f := &st.Fields[i]
		if f.BitSize != 0 || f.Base {
			continue
		}
		in := typemodel.Field{Name: f.Name, Offset: typemodel.SatAdd(m.Offset, f.Offset), Type: f.Type}
		if f.Name == "" {
			out = append(out, anonymousMembers(&in, depth+1)...)
			continue
		}
		out = append(out, in)
	}
	return out
}

// fieldLabel names a member in findings and covers lists: "<base NAME>"
// for a base class, "<anonymous@OFFSET>" for an unnamed member.
func fieldLabel(m *typemodel.Field) string {
	switch {
	case m.Base:
		return "<base " + m.Name + ">"
	case m.Name == "":
		return fmt.Sprintf("<anonymous@%d>", m.Offset)
	}
	return m.Name
}

// emptyClass: t is a class with no data (at most one byte, no data
// members): an empty base takes no storage.
func emptyClass(t *typemodel.Type) bool {
	s := typemodel.Strip(t)
	if s == nil || !s.Kind.Aggregate() || typemodel.SizeOf(s) > 1 {
		return false
	}
	for i := range s.Fields {
		if !s.Fields[i].Base {
			return false
		}
	}
	return true
}
