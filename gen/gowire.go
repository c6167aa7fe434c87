package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// wireStructs are the byte images that cross a process or a hash: the spec's
// side = "wire" structs.
func wireStructs(s *spec.Spec) []*spec.Struct {
	var out []*spec.Struct
	for _, st := range structsInOrder(s) {
		if st.Side == "wire" {
			out = append(out, st)
		}
	}
	return out
}

// goWire emits little-endian encoders for the byte images, so the runtime
// never depends on Go's own struct layout for what goes on the wire.
func goWire(s *spec.Spec) ([]File, error) {
	f := newGoFile(s)
	le := jen.Qual("encoding/binary", "LittleEndian")
	for _, st := range wireStructs(s) {
		name := GoName(st.Name)
		var put, get []jen.Code
		for _, fd := range st.Fields {
			if flexible(fd) {
				continue
			}
			p, g, err := wireField(le, fd.T, jen.Id("v").Dot(GoName(fd.StableName())), fd.Offset)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", st.Name, fd.Name, err)
			}
			put, get = append(put, p...), append(get, g...)
		}
		f.Commentf("MarshalTo writes the %d-byte image of v to b (little-endian, spec offsets).", st.Size)
		f.Func().Params(jen.Id("v").Op("*").Id(name)).Id("MarshalTo").Params(jen.Id("b").Index().Byte()).Block(
			append([]jen.Code{jen.Id("_").Op("=").Id("b").Index(jen.Lit(st.Size - 1)).Comment("one bounds check")}, put...)...,
		)
		f.Line()
		f.Commentf("UnmarshalFrom reads v from the %d-byte image in b.", st.Size)
		f.Func().Params(jen.Id("v").Op("*").Id(name)).Id("UnmarshalFrom").Params(jen.Id("b").Index().Byte()).Block(
			append([]jen.Code{jen.Id("_").Op("=").Id("b").Index(jen.Lit(st.Size - 1))}, get...)...,
		)
		f.Line()
	}
	out, err := goFile("zwire.go", f)
	return []File{out}, err
}

// wireField returns the statements that encode and decode one value at off.
func wireField(le *jen.Statement, t *spec.Type, v *jen.Statement, off int) (put, get []jen.Code, err error) {
	at := func() *jen.Statement { return jen.Id("b").Index(jen.Lit(off).Op(":")) }
	switch t.Kind {
	case spec.KindBool:
		return []jen.Code{jen.Id("b").Index(jen.Lit(off)).Op("=").Lit(0), jen.If(v.Clone()).Block(jen.Id("b").Index(jen.Lit(off)).Op("=").Lit(1))},
			[]jen.Code{v.Clone().Op("=").Id("b").Index(jen.Lit(off)).Op("!=").Lit(0)}, nil
	case spec.KindChar:
		return []jen.Code{jen.Id("b").Index(jen.Lit(off)).Op("=").Add(v.Clone())},
			[]jen.Code{v.Clone().Op("=").Id("b").Index(jen.Lit(off))}, nil
	case spec.KindInt, spec.KindEnum:
		size := t.Size()
		bits := map[int]string{1: "8", 2: "16", 4: "32", 8: "64"}[size]
		raw := "uint" + bits
		_, gname, _ := spec.Builtin(t.Name)
		if t.Kind == spec.KindEnum {
			gname = GoName(t.Enum.Name)
		}
		// Convert only where the Go type is not already the raw unsigned type.
		to := func(typ string, x jen.Code) jen.Code {
			if typ == gname && typ == raw || size == 1 && typ == "byte" && (gname == "uint8" || gname == "byte") {
				return x
			}
			return jen.Id(typ).Call(x)
		}
		if size == 1 {
			return []jen.Code{jen.Id("b").Index(jen.Lit(off)).Op("=").Add(to("byte", v.Clone()))},
				[]jen.Code{v.Clone().Op("=").Add(to(gname, jen.Id("b").Index(jen.Lit(off))))}, nil
		}
		return []jen.Code{jen.Add(le).Dot("PutUint"+bits).Call(at(), to(raw, v.Clone()))},
			[]jen.Code{v.Clone().Op("=").Add(to(gname, jen.Add(le).Dot("Uint"+bits).Call(at())))}, nil
	case spec.KindArray:
		if es := t.Elem.Size(); es == 1 && t.Elem.Kind != spec.KindBool {
			return []jen.Code{jen.Copy(jen.Id("b").Index(jen.Lit(off).Op(":").Lit(off+t.Len)), v.Clone().Index(jen.Op(":")))},
				[]jen.Code{jen.Copy(v.Clone().Index(jen.Op(":")), jen.Id("b").Index(jen.Lit(off).Op(":").Lit(off+t.Len)))}, nil
		}
		for i := 0; i < t.Len; i++ {
			p, g, err := wireField(le, t.Elem, v.Clone().Index(jen.Lit(i)), off+i*t.Elem.Size())
			if err != nil {
				return nil, nil, err
			}
			put, get = append(put, p...), append(get, g...)
		}
		return put, get, nil
	case spec.KindStruct:
		return []jen.Code{v.Clone().Dot("MarshalTo").Call(at())},
			[]jen.Code{v.Clone().Dot("UnmarshalFrom").Call(at())}, nil
	}
	return nil, nil, fmt.Errorf("type %s cannot be part of a byte image (pointers and host objects do not cross a process)", t)
}
