package gen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// Absent fields (docs/generator.md#absent-fields). A field that some
// release of the tree marks absent ([[struct.absent]]) gets presence
// accessors in the Go mirror of every release — Has<F>, Get<F> returning
// (value, ok) and Set<F> returning whether it stored — so hand-written code
// that goes through them compiles for every release tag, and the C header
// defines NRTABI_HAS_<STRUCT>_<FIELD> as 1 or 0. The struct itself keeps
// the release's layout: no member is invented where the field is absent.

// presence is the set of fields with presence accessors: by struct name,
// by the field's stable name.
type presence map[string]map[string]*presentField

// presentField is one field some release lacks.
type presentField struct {
	typ     string     // the Go type of its accessors, as goTypeString writes it
	t       *spec.Type // that type, from the first absent row
	absent  []string   // the releases that lack it, in the order given
	firstAt string     // the first absent row, file:line
}

// presenceOf collects the absent rows of specs, and refuses, one line each,
// an absent row whose type is not the type the field has where present or
// in another release's absent row: the accessors have one type in every
// release.
func presenceOf(specs []*spec.Spec) (presence, error) {
	p := presence{}
	var lines []string
	for _, s := range specs {
		for _, st := range s.Structs {
			for j := range st.Absent {
				a := &st.Absent[j]
				if a.T == nil {
					continue
				}
				fields := p[st.Name]
				if fields == nil {
					fields = map[string]*presentField{}
					p[st.Name] = fields
				}
				pf := fields[a.Name]
				if pf == nil {
					pf = &presentField{typ: goTypeString(a.T), t: a.T, firstAt: rowAt(a.Fact)}
					fields[a.Name] = pf
				} else if g := goTypeString(a.T); g != pf.typ {
					lines = append(lines, fmt.Sprintf("%s: %s.%s (absent) has type %s, but the absent row at %s has %s; the presence accessors have one type in every release, so correct one row",
						rowAt(a.Fact), st.Name, a.Name, a.Type, pf.firstAt, pf.t))
				}
				pf.absent = append(pf.absent, s.Release.Name)
			}
		}
	}
	for _, s := range specs {
		for _, st := range s.Structs {
			for name, pf := range p[st.Name] {
				fd := stableField(st, name)
				if fd == nil || fd.T == nil {
					continue
				}
				if g := goTypeString(fd.T); g != pf.typ {
					lines = append(lines, fmt.Sprintf("%s: %s.%s is %s in %s, but the absent row at %s has %s; the presence accessors have one type in every release, so give the absent row the field's type",
						rowAt(fd.Fact), st.Name, fd.Name, fd.Type, s.Release.Name, pf.firstAt, pf.t))
				}
			}
		}
	}
	if len(lines) > 0 {
		sort.Strings(lines)
		return nil, &Refusal{Lines: lines}
	}
	return p, nil
}

// ofStruct lists the presence fields of st by stable name, sorted.
func (p presence) ofStruct(st *spec.Struct) []string {
	var out []string
	for name := range p[st.Name] {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// stableField is the field of st whose stable name is name.
func stableField(st *spec.Struct, name string) *spec.Field {
	for j := range st.Fields {
		if st.Fields[j].StableName() == name {
			return &st.Fields[j]
		}
	}
	return nil
}

// rowAt names a row as file:line for messages.
func rowAt(f spec.Fact) string {
	if f.Pos.Line == 0 {
		return f.Pos.File
	}
	return fmt.Sprintf("%s:%d", f.Pos.File, f.Pos.Line)
}

// presenceAccessors are the Has/Get/Set trio of every presence field of st
// that the release has or marks absent. A field the release neither has nor
// marks absent gets none: checkHandUses refuses a use of it.
func presenceAccessors(p presence, st *spec.Struct) []jen.Code {
	var out []jen.Code
	recvName := GoName(st.Name)
	for _, name := range p.ofStruct(st) {
		pf := p[st.Name][name]
		fd := stableField(st, name)
		if fd == nil && st.AbsentByName(name) == nil {
			continue
		}
		g := GoName(name)
		typ := goType(pf.t)
		// One line per accessor, as the other accessors: gofmt keeps a
		// one-line body as written.
		recv := func() *jen.Statement { return jen.Params(jen.Id("v").Op("*").Id(recvName)) }
		has := jen.Return(jen.True())
		get := jen.Return(jen.Id("v").Dot(g), jen.True())
		set := jen.Id("v").Dot(g).Op("=").Id("x").Op(";").Return(jen.True())
		note := fmt.Sprintf("Has%s, Get%s and Set%s reach %s, which this release has and another lacks (docs/generator.md#absent-fields).", g, g, g, name)
		if fd == nil {
			has, get, set = jen.Return(jen.False()), jen.Return(jen.Id("x"), jen.False()), jen.Return(jen.False())
			note = fmt.Sprintf("Has%s, Get%s and Set%s stand for %s, which this release lacks: Has%s is false, Get%s gives the zero value and false, Set%s stores nothing and is false (docs/generator.md#absent-fields).", g, g, g, name, g, g, g)
		}
		out = append(out, jen.Comment(commentText(note)).Line().
			Func().Add(recv()).Id("Has"+g).Params().Bool().Op("{").Add(has).Op("}").Line().
			Func().Add(recv()).Id("Get"+g).Params().Params(jen.Id("x").Add(typ), jen.Id("ok").Bool()).Op("{").Add(get).Op("}").Line().
			Func().Add(recv()).Id("Set"+g).Params(jen.Id("x").Add(typ)).Bool().Op("{").Add(set).Op("}"))
	}
	return out
}

// hasMacro is the C macro that says whether the release has st's field.
func hasMacro(st *spec.Struct, field string) string {
	return "NRTABI_HAS_" + strings.ToUpper(st.Name) + "_" + strings.ToUpper(field)
}

// presenceMacros are the NRTABI_HAS_ macros of s's structs: 1 where the
// release has the field, 0 where it marks it absent.
func presenceMacros(p presence, s *spec.Spec) []cMacro {
	var out []cMacro
	for _, st := range s.Structs {
		for _, name := range p.ofStruct(st) {
			switch fd := stableField(st, name); {
			case fd != nil:
				out = append(out, cMacro{Name: hasMacro(st, name), Value: "1", Comment: commentText(fmt.Sprintf("%s.%s is a member here; another release lacks it", st.Name, fd.Name))})
			case st.AbsentByName(name) != nil:
				a := st.AbsentByName(name)
				out = append(out, cMacro{Name: hasMacro(st, name), Value: "0", Comment: commentText(fmt.Sprintf("%s has no %s (%s, %s)", st.Name, name, a.Conf, a.Source))})
			}
		}
	}
	return out
}

// Refusal is generation refused for reasons listed one per line: a command
// prints each line on its own (escaped), never the lines joined.
type Refusal struct{ Lines []string }

func (r *Refusal) Error() string { return strings.Join(r.Lines, "\n") }
