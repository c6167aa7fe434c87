package gen

import (
	"fmt"

	"github.com/nrtabi/nrtabi/spec"
)

// HeaderName is the generated C header every other C artefact includes.
const HeaderName = "nrtabi.h"

type cEnum struct {
	Name, Tag string
	Values    []cEnumValue
	Comment   string
	Size      int
	Attr      string // between "enum" and the tag: the underlying size when not 4
	Base      string // the integer type standing for an enum without enumerators
}

type cEnumValue struct {
	Name    string
	Value   int64
	AliasOf string // the enumerator it aliases, written as its value
}

// enumMode is gcc's machine mode for an enum size other than 4. The
// mode attribute fixes the underlying size whatever the values:
// __attribute__((packed)) takes the smallest size that holds them (a 2-byte
// enum whose values fit a byte would shrink), and C23's enum : type needs
// gcc 13 (docs/generator.md#enums). A switch, not a map built at init
// (docs/benchmarks.md#start-up-2026-12-04).
func enumMode(size int) (string, bool) {
	switch size {
	case 1:
		return "QI", true
	case 2:
		return "HI", true
	case 8:
		return "DI", true
	}
	return "", false
}

func cEnumOf(e spec.Enum) cEnum {
	ce := cEnum{Name: e.Name, Tag: e.Tag, Size: e.Size, Comment: commentText(fmt.Sprintf("%s, %s", e.Conf, e.Source))}
	if m, ok := enumMode(e.Size); ok {
		ce.Attr = "__attribute__((mode(" + m + "))) "
	}
	ce.Base = fmt.Sprintf("uint%d_t", e.Size*8)
	if e.Signed() {
		ce.Base = fmt.Sprintf("int%d_t", e.Size*8)
	}
	for _, v := range e.Values {
		ce.Values = append(ce.Values, cEnumValue{v.Name, v.Value, v.AliasOf})
	}
	return ce
}

type cMacro struct {
	Name, Value, Comment string
}

type cStruct struct {
	Name     string // the spec name
	Tag      string
	Typedefs []string
	Attr     string // between "struct" and the tag
	Members  []cMember
	Asserts  []cAssert
	Comment  []string
}

type cMember struct {
	Decl, Comment string
}

type cAssert struct {
	Expr, Msg string
}

type cFunc struct {
	Name, Ret, Params, Comment string
}

type cVector struct {
	Name, Elem string
}

type headerData struct {
	Banner, Release, Guard string
	Enums                  []cEnum
	Opaques                []string
	Constants              []cMacro
	Messages               []cMacro
	Typedefs               []cMacro // Name = typedef, Value = "struct tag"
	Vectors                []cVector
	Structs                []cStruct
	Forward, Reverse       []cFunc
	Asserts                int
	Presence               []cMacro // NRTABI_HAS_<STRUCT>_<FIELD> (docs/generator.md#absent-fields)
}

func cHeader(s *spec.Spec, p presence) ([]File, error) {
	d := headerData{
		Banner:  cBanner(s),
		Release: commentText(s.Release.Name),
		Guard:   "NRTABI_" + releaseIdent(s.Release.Name) + "_H",
	}
	for _, e := range s.Enums {
		d.Enums = append(d.Enums, cEnumOf(e))
	}
	for _, o := range s.OpaqueTypes {
		d.Opaques = append(d.Opaques, fmt.Sprintf("typedef struct %s %s;", o.CTag(), o.Name))
	}
	for _, k := range s.Constants {
		d.Constants = append(d.Constants, cMacro{Name: k.Name, Value: cConst(k), Comment: commentText(string(k.Conf))})
	}
	for _, m := range s.Messages {
		d.Messages = append(d.Messages, cMacro{Name: "NRTABI_MSG_" + cIdent(m.ID), Value: cString(m.Text)})
	}
	for _, st := range s.Structs {
		for _, td := range st.Typedefs() {
			d.Typedefs = append(d.Typedefs, cMacro{Name: td, Value: "struct " + st.CTag()})
		}
	}
	d.Vectors = vectors(s)
	for _, st := range structsInOrder(s) {
		cs := cStructOf(st)
		d.Asserts += len(cs.Asserts)
		d.Structs = append(d.Structs, cs)
	}
	for _, f := range s.Forward {
		d.Forward = append(d.Forward, cFunc{Name: f.Name, Ret: cRet(f.Signature), Params: cParams(f.Params),
			Comment: commentText(fmt.Sprintf("dlsym #%d, slot %#x, via %s", f.Index, f.Slot, f.Trampoline))})
	}
	for _, r := range s.Reverse {
		d.Reverse = append(d.Reverse, cFunc{Name: r.Name, Ret: cRet(r.Signature), Params: cParams(r.Params),
			Comment: commentText(fmt.Sprintf("@@%s, %s", r.Version, r.Shape))})
	}
	d.Presence = presenceMacros(p, s)
	data, err := execTemplate("header.h.tmpl", d)
	if err != nil {
		return nil, err
	}
	return []File{{Path: "c/" + HeaderName, Data: data}}, nil
}

// CountAsserts reports how many size and offset assertions the generated C
// header carries for s.
func CountAsserts(s *spec.Spec) int {
	n := 0
	for _, st := range s.Structs {
		n += len(cStructOf(st).Asserts)
	}
	return n
}

func cConst(k spec.Constant) string {
	if v, ok := k.Str(); ok {
		return cString(v)
	}
	v, _ := k.Int()
	switch k.Type {
	case "u64":
		return fmt.Sprintf("UINT64_C(%d)", v)
	case "u32":
		return fmt.Sprintf("%dU", v)
	case "size_t":
		return fmt.Sprintf("((size_t)%d)", v)
	}
	return fmt.Sprint(v)
}

// vectors collects the distinct std::vector element types, innermost first.
func vectors(s *spec.Spec) []cVector {
	var out []cVector
	seen := map[string]bool{}
	var add func(t *spec.Type)
	add = func(t *spec.Type) {
		switch t.Kind {
		case spec.KindPointer, spec.KindArray:
			add(t.Elem)
		case spec.KindVector:
			add(t.Elem)
			name := vectorName(t)
			if !seen[name] {
				seen[name] = true
				out = append(out, cVector{Name: name, Elem: CDecl(t.Elem, "*")})
			}
		}
	}
	for _, st := range s.Structs {
		for _, f := range st.Fields {
			add(f.T)
		}
	}
	return out
}

func opaqueMember(o spec.Opaque) string {
	return fmt.Sprintf("unsigned char %s%d[%d]", spec.OpaqueMemberPrefix, o.Offset, o.Size)
}

func cStructOf(st *spec.Struct) cStruct {
	cs := cStruct{Name: st.Name, Tag: st.CTag(), Typedefs: st.Typedefs()}
	if st.Packed {
		cs.Attr = "__attribute__((packed)) "
	}
	cs.Comment = append(cs.Comment, commentText(fmt.Sprintf("%s: %d bytes, %s (%s).", st.Name, st.Size, st.Conf, st.Source)))
	if st.Prefix {
		cs.Comment = append(cs.Comment, "Only a prefix of the real object is modelled.")
	}
	if st.Note != "" {
		for _, l := range wrapComment(st.Note, 90) {
			cs.Comment = append(cs.Comment, commentText(l))
		}
	}
	natural := 1
	for _, f := range st.Fields {
		natural = max(natural, f.T.Align())
	}
	ref := "struct " + cs.Tag
	// The alignment floor goes on the first member it does not move: one
	// at a multiple of it (in every struct but a hand-written one whose
	// members all start off it, the member at 0). Failing that, on the
	// struct.
	alignAt := -1
	if st.MinAlign > natural && !st.Packed {
		cs.Attr = fmt.Sprintf("__attribute__((aligned(%d))) ", st.MinAlign)
		for i, m := range placeMembers(st) {
			if !m.isPadding() && m.At%st.MinAlign == 0 {
				alignAt, cs.Attr = i, ""
				break
			}
		}
	}
	for i, m := range placeMembers(st) {
		if m.isPadding() {
			cs.Members = append(cs.Members, cPadding(m.At, m.Size))
			continue
		}
		var mem cMember
		if m.Field != nil {
			f := m.Field
			mem.Decl = CDecl(f.T, f.Name)
			mem.Comment = fmt.Sprintf("+%d %s", f.Offset, f.Conf)
			if stable := f.StableName(); stable != f.Name {
				// The release's spelling mirrors the vendor header; the
				// stable one is what C in runtime/ names in every release
				// (docs/generator.md#stable-fields). One anonymous union
				// of one type adds no size or alignment.
				mem.Decl = fmt.Sprintf("union { %s; %s; }", CDecl(f.T, f.Name), CDecl(f.T, stable))
				mem.Comment += ", stable name " + stable
			}
			if c := f.ConfOf("type"); c != f.Conf {
				mem.Comment += ", type " + string(c)
			}
			mem.Comment = commentText(mem.Comment)
		} else {
			mem.Decl = opaqueMember(*m.Opaque)
			mem.Comment = fmt.Sprintf("+%d..%d opaque", m.Opaque.Offset, m.Opaque.End())
		}
		if i == alignAt {
			mem.Decl = fmt.Sprintf("_Alignas(%d) %s", st.MinAlign, mem.Decl)
		}
		cs.Members = append(cs.Members, mem)
	}
	cs.Asserts = append(cs.Asserts, cAssert{
		Expr: fmt.Sprintf("sizeof(%s) == %d", ref, st.Size),
		Msg:  fmt.Sprintf("%s: spec size %d (%s)", st.Name, st.Size, lineOf(st.Fact)),
	})
	for _, m := range st.Members() {
		if o := m.Opaque; o != nil {
			cs.Asserts = append(cs.Asserts, cAssert{
				Expr: fmt.Sprintf("offsetof(%s, %s%d) == %d", ref, spec.OpaqueMemberPrefix, o.Offset, o.Offset),
				Msg:  fmt.Sprintf("%s: spec opaque range %d..%d (%s)", st.Name, o.Offset, o.End(), lineOf(o.Fact)),
			})
			continue
		}
		f := m.Field
		cs.Asserts = append(cs.Asserts, cAssert{
			Expr: fmt.Sprintf("offsetof(%s, %s) == %d", ref, f.Name, f.Offset),
			Msg:  fmt.Sprintf("%s.%s: spec offset %d (%s)", st.Name, f.Name, f.Offset, lineOf(f.Fact)),
		})
		if stable := f.StableName(); stable != f.Name {
			cs.Asserts = append(cs.Asserts, cAssert{
				Expr: fmt.Sprintf("offsetof(%s, %s) == %d", ref, stable, f.Offset),
				Msg:  fmt.Sprintf("%s.%s (stable name %s): spec offset %d (%s)", st.Name, f.Name, stable, f.Offset, lineOf(f.Fact)),
			})
		}
	}
	return cs
}
