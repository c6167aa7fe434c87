package layoutcheck

import (
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/nrtabi/nrtabi/layoutcheck/grade"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// CheckStruct compares one DWARF layout, read by r, with its spec struct:
// the facts of the struct and of the structs embedded in it, each once.
// The list is flat, for a view of the one struct (show): consequences are
// listed after their cause, a moved run is one finding per field, and a
// fact of an embedded struct is named by its path in st.
func CheckStruct(r *elfread.Reader, st *spec.Struct, l *elfread.Layout) []Finding {
	c := newStructChecker(r, nil)
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
// binary's side is converted from DWARF here.
type structChecker struct {
	r       *elfread.Reader
	sp      *spec.Spec // for the names of structs and opaque types a pointer or member refers to (nil: none)
	g       *grade.Grader
	layouts map[string]*grade.Layout
}

func newStructChecker(r *elfread.Reader, sp *spec.Spec) *structChecker {
	return &structChecker{r: r, sp: sp, g: grade.New(), layouts: map[string]*grade.Layout{}}
}

func (c *structChecker) grade(st *spec.Struct, l *elfread.Layout) []*grade.Finding {
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
func isFiller(st *spec.Struct, m *elfread.Member) bool {
	return st != nil && strings.HasPrefix(m.Name, spec.OpaqueMemberPrefix) && st.OpaqueHolding(m.Offset, m.End()) != nil
}

// layout converts a DWARF layout into the grading model. st is the spec
// struct it is compared with: a member of the same name whose type
// specmatch finds to be the spec's is spelled as the spec spells it, so
// typedef and tag spellings of one type are one type.
func (c *structChecker) layout(st *spec.Struct, l *elfread.Layout, depth int) *grade.Layout {
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
	out := &grade.Layout{Name: name, Key: key, Size: l.Size, Align: l.Align}
	c.layouts[key] = out
	specField := map[string]*spec.Field{}
	if st != nil {
		for i := range st.Fields {
			specField[st.Fields[i].Name] = &st.Fields[i]
		}
	}
	for i, m := range l.Members {
		_, isArray := elfread.Strip(m.Type).(*godwarf.ArrayType)
		last := i == len(l.Members)-1 && isArray
		if m.Virtual || m.Size == 0 && m.BitSize == 0 && !last || m.Base && specmatch.EmptyClass(m.Type) {
			continue // virtual bases have no fixed offset; zero-length members take no bytes
		}
		gm := grade.Member{Name: m.Name, Offset: m.Offset, Size: m.Size, BitOffset: m.BitOffset, BitSize: m.BitSize, Filler: isFiller(st, m)}
		if m.Base {
			gm.Name = specmatch.MemberLabel(m)
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
				gm.Group = append(gm.Group, grade.Member{Name: in.Name, Offset: in.Offset, Size: in.Size, Type: c.typeOf(in.Type, it, depth)})
			}
		}
		out.Members = append(out.Members, gm)
	}
	return out
}

// typeOf converts a DWARF type; t is the spec type it is compared with,
// or nil.
func (c *structChecker) typeOf(d godwarf.Type, t *spec.Type, depth int) *grade.Type {
	sd := elfread.Strip(d)
	out := &grade.Type{Size: elfread.TypeSize(d), Align: elfread.TypeAlign(d), Len: -1, Display: elfread.TypeName(d)}
	if depth > 16 {
		out.Canon = elfread.TypeName(d)
		return out
	}
	// The spec's spelling when specmatch says the types agree, except where
	// the spec says only "some pointer" (void* or an opaque pointee): there
	// the pointee's own name is kept, so a new pointee is seen.
	agree := t != nil && specmatch.MatchType(t, d, 0) == ""
	if agree && t.Kind == spec.KindPointer {
		if k := t.Elem.Base().Kind; k == spec.KindVoid || k == spec.KindOpaque {
			agree = false
		}
	}
	if t != nil && t.Kind == spec.KindOpaque {
		agree = false // specmatch takes any pointee for an opaque type; its name is what tells two apart
	}
	var elemSpec *spec.Type
	if t != nil && (t.Kind == spec.KindPointer || t.Kind == spec.KindArray) {
		elemSpec = t.Elem
	}
	switch x := sd.(type) {
	case nil, *godwarf.VoidType:
		out.Kind, out.Canon = grade.TVoid, "void"
	case *godwarf.PtrType:
		out.Kind, out.Elem = grade.TPointer, c.typeOf(x.Type, elemSpec, depth+1)
		out.Canon = out.Elem.Canon + "*"
		if out.Elem.Kind == grade.TFunc || out.Elem.Canon == "" {
			out.Canon = "void*" // what nrtabi extract writes for a pointee the grammar cannot spell
		}
	case *godwarf.ArrayType:
		out.Kind, out.Elem, out.Len = grade.TArray, c.typeOf(x.Type, elemSpec, depth+1), x.Count
		if x.Count <= 0 {
			out.Len = -1
			out.Canon = out.Elem.Canon + "[]"
		} else {
			out.Canon = fmt.Sprintf("%s[%d]", out.Elem.Canon, x.Count)
		}
	case *godwarf.FuncType:
		out.Kind = grade.TFunc
	case *godwarf.StructType:
		out.Kind = grade.TStruct
		out.Canon = c.structName(x, specmatch.TypedefNames(d))
		if x.Kind != "union" && x.StructName != "" || x.Kind != "union" && len(specmatch.TypedefNames(d)) > 0 {
			var inner *spec.Struct
			if t != nil && t.Kind == spec.KindStruct {
				inner = t.Struct
			}
			if inner == nil && c.sp != nil {
				inner = c.sp.StructByName(out.Canon)
			}
			off := c.r.GlobalOffset(x)
			out.Struct = func() (*grade.Layout, error) {
				l, err := c.r.Layout(off)
				if err != nil {
					return nil, err
				}
				if l.Declared {
					return nil, fmt.Errorf("%s has no layout in this DWARF (a declaration)", out.Canon)
				}
				return c.layout(inner, l, depth+1), nil
			}
			if l, err := c.r.Layout(off); err == nil && l.Declared {
				out.Struct = nil // a declaration: undescribed, like an opaque type
			}
		}
	default:
		out.Kind = grade.TScalar
		out.Canon = scalarCanon(d, sd)
	}
	if agree {
		out.Canon = grade.Canon(t)
	}
	return out
}

var intNames = map[string]string{
	"uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
	"int8_t": "i8", "int16_t": "i16", "int32_t": "i32", "int64_t": "i64",
	"size_t": "size_t", "ssize_t": "ssize_t", "time_t": "time_t", "uintptr_t": "uintptr_t",
	"pthread_mutex_t": "pthread_mutex_t", "cpu_set_t": "cpu_set_t",
}

// scalarCanon spells a scalar as the spec grammar would (grade.Canon's
// spelling: int as i32).
func scalarCanon(d, sd godwarf.Type) string {
	for _, n := range specmatch.TypedefNames(d) {
		if b, ok := intNames[n]; ok {
			return b
		}
	}
	switch x := sd.(type) {
	case *godwarf.BoolType:
		return "bool"
	case *godwarf.EnumType:
		if tds := specmatch.TypedefNames(d); len(tds) > 0 {
			return tds[0]
		}
		return x.EnumName
	}
	if sd.Common().Name == "char" {
		return "char"
	}
	if size, signed, ok := specmatch.IntShape(sd); ok {
		p := "u"
		if signed {
			p = "i"
		}
		return fmt.Sprintf("%s%d", p, size*8)
	}
	return sd.Common().Name
}

// structName is the spec's name for a DWARF struct when the spec has one
// (a struct or an opaque type), else its typedef or tag.
func (c *structChecker) structName(d *godwarf.StructType, tds []string) string {
	if c.sp != nil {
		for _, st := range c.sp.Structs {
			if specmatch.StructNamesMatch(st, d, tds) {
				return st.Name
			}
		}
		for _, o := range c.sp.OpaqueTypes {
			if d.StructName == o.CTag() || d.StructName == o.Name {
				return o.Name
			}
			for _, n := range tds {
				if n == o.Name {
					return o.Name
				}
			}
		}
	}
	if len(tds) > 0 {
		return tds[0]
	}
	if d.StructName == "" {
		return fmt.Sprintf("<anonymous %s of %d B>", d.Kind, d.Size())
	}
	return d.StructName
}

// maxAnonymousDepth bounds the anonymous members read through one another.
const maxAnonymousDepth = 8

// anonymousMembers are the named members an unnamed struct or union member
// m makes members of the enclosing struct (C11 6.7.2.1p13), at their offsets
// in it, through nested anonymous members too. Bitfields are left to the
// anonymous member: their offsets need the bit arithmetic of the reader.
func anonymousMembers(m *elfread.Member, depth int) []*elfread.Member {
	st, ok := elfread.Strip(m.Type).(*godwarf.StructType)
	if !ok || st.StructName != "" || depth >= maxAnonymousDepth || m.BitSize != 0 {
		return nil
	}
	var out []*elfread.Member
	for _, f := range st.Field {
		if f == nil || f.BitSize != 0 {
			continue
		}
		in := &elfread.Member{Name: f.Name, Offset: elfread.SatAdd(m.Offset, f.ByteOffset), Size: elfread.TypeSize(f.Type), Type: f.Type}
		if f.Name == "" {
			out = append(out, anonymousMembers(in, depth+1)...)
			continue
		}
		out = append(out, in)
	}
	return out
}

func opaqueHolding(st *spec.Struct, m *elfread.Member) *spec.Opaque {
	start := m.Offset
	if m.BitSize > 0 {
		start = m.BitOffset / 8
	}
	return st.OpaqueHolding(start, m.End())
}

func covered(o *spec.Opaque, m *elfread.Member) bool {
	for _, n := range o.Covers {
		if n == m.Name || n == specmatch.MemberLabel(m) {
			return true
		}
	}
	return false
}
