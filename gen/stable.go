package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// Stable fields (docs/generator.md#stable-fields). A field keeps its stable
// name (spec.Field.StableName: the end of its chain of was rows) as its Go
// field and as a second C member name in every release, so a rename never
// reaches hand-written code. Its Go type is the release's layout type; every
// integer-like field also gets Get<Field>/Set<Field> accessors in the stable
// type (the field's type where its stable name began), so code that goes
// through them compiles unchanged when a release re-types the field, as long
// as every stable value survives the conversion.

// stableType is the field's stable type, resolved against s: a builtin or an
// enum of s. It is fd.T itself when the release keeps the type.
func stableType(s *spec.Spec, fd *spec.Field) (*spec.Type, error) {
	if fd.StableTypeName() == fd.Type {
		return fd.T, nil
	}
	t, err := spec.ParseType(fd.StableTypeName())
	if err != nil {
		return nil, fmt.Errorf("stable type of %s: %w", fd.Name, err)
	}
	// A named type may be spelled by its typedef in one release and its tag
	// in another: both name the same declaration.
	if t.Kind == spec.KindStruct {
		if st := s.StructByName(t.Name); st != nil {
			t.Struct = st
		} else if e := s.EnumByName(t.Name); e != nil {
			t.Kind, t.Enum = spec.KindEnum, e
		} else {
			return nil, fmt.Errorf("its stable type %s is no builtin, struct or enum of release %s", t.Name, s.Release.Name)
		}
	}
	return t, nil
}

// integerLike is a type the accessors convert: an integer, an enum or char.
// bool converts only to bool, so it counts only when both sides are bool.
func integerLike(t *spec.Type) bool {
	_, _, ok := t.IntDomain()
	return ok && t.Kind != spec.KindBool
}

// conversion says how the release's type cur holds the stable type stable:
// same (one Go type, no conversion), lossless (every value the field can hold
// in the stable domain — the stable type's, or the declared range — survives
// both ways), or neither.
func conversion(stable, cur *spec.Type, rng []int64) (same, lossless bool) {
	if stable == nil || cur == nil {
		return false, false
	}
	if goTypeString(stable) == goTypeString(cur) {
		return true, true
	}
	if stable.Kind == spec.KindBool || cur.Kind == spec.KindBool {
		return false, false
	}
	if !integerLike(stable) || !integerLike(cur) {
		return false, false
	}
	if len(rng) == 2 {
		return false, stable.RangeFits(rng[0], rng[1]) && cur.RangeFits(rng[0], rng[1])
	}
	lo, hi, _ := stable.IntDomain()
	return false, cur.DomainFits(lo, hi)
}

// rangeHint is the widest range both types hold, for the error that asks
// for one.
func rangeHint(stable, cur *spec.Type) string {
	slo, shi, ok1 := stable.IntDomain()
	clo, chi, ok2 := cur.IntDomain()
	if !ok1 || !ok2 {
		return "[lo, hi]"
	}
	lo, hi := max(slo, clo), min(shi, chi)
	return fmt.Sprintf("[%d, %d]", lo, hi)
}

func goTypeString(t *spec.Type) string { return fmt.Sprintf("%#v", goType(t)) }

// accessors are the Get/Set pair of every integer-like field whose stable
// type the release holds losslessly, in the stable type. A field whose
// re-type loses values gets none: `nrtabi gen --all` refuses the tree when
// hand-written code names it (checkHandUses).
func accessors(s *spec.Spec, st *spec.Struct, p presence) []jen.Code {
	var out []jen.Code
	recv := GoName(st.Name)
	for i := range st.Fields {
		fd := &st.Fields[i]
		if fd.T == nil || flexible(*fd) {
			continue
		}
		if p[st.Name][fd.StableName()] != nil {
			continue // presence accessors take Get and Set (presenceAccessors)
		}
		if _, _, ok := fd.T.IntDomain(); !ok {
			continue
		}
		stable, err := stableType(s, fd)
		if err != nil {
			continue
		}
		same, ok := conversion(stable, fd.T, fd.Range)
		if !ok {
			continue
		}
		g := GoName(fd.StableName())
		get := jen.Id("v").Dot(g)
		set := jen.Id("x")
		if !same {
			get = jen.Add(goType(stable)).Call(get)
			set = jen.Add(goType(fd.T)).Call(set)
		}
		note := fmt.Sprintf("Get%s and Set%s read and write %s in its stable type %s", g, g, fd.Name, fd.StableTypeName())
		if !same {
			note += fmt.Sprintf(" (%s in this release", fd.Type)
			if len(fd.Range) == 2 {
				note += fmt.Sprintf(", values %d..%d", fd.Range[0], fd.Range[1])
			}
			note += ")"
		}
		// One line per accessor: gofmt keeps a one-line body as written.
		out = append(out, jen.Comment(commentText(note+".")).Line().
			Func().Params(jen.Id("v").Op("*").Id(recv)).Id("Get"+g).Params().Add(goType(stable)).Op("{").Return(get).Op("}").Line().
			Func().Params(jen.Id("v").Op("*").Id(recv)).Id("Set"+g).Params(jen.Id("x").Add(goType(stable))).Op("{").Id("v").Dot(g).Op("=").Add(set).Op("}"))
	}
	return out
}
