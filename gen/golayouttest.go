package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// goLayoutTest emits the layout regression test: every asserted size and
// offset as a table of spec vs Go, printed with -v and on any mismatch, and a
// round trip of every byte image that checks each field lands at its offset.
func goLayoutTest(s *spec.Spec) ([]File, error) {
	f := newGoFile(s)
	var rows []jen.Code
	for _, r := range layoutRows(s) {
		rows = append(rows, jen.Values(jen.Lit(r.St.Name), jen.Lit(r.member()), jen.Lit(r.want()), r.actual()))
	}
	f.Comment("TestLayout compares every Go mirror with the spec. With the assertions of")
	f.Comment("zasserts.go a mismatch does not compile; build with -tags " + NoAssertTag + " to")
	f.Comment("see which rows disagree. An opaque range's filler is a blank field, which")
	f.Comment("unsafe.Offsetof cannot name: reflect measures it, here only.")
	f.Func().Id("TestLayout").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.Id("rows").Op(":=").Index().Struct(
			jen.Id("typ").String(), jen.Id("field").String(),
			jen.Id("want").Uintptr(), jen.Id("got").Uintptr(),
		).Values(rows...),
		jen.Var().Id("b").Qual("strings", "Builder"),
		jen.Id("w").Op(":=").Qual("text/tabwriter", "NewWriter").Call(jen.Op("&").Id("b"), jen.Lit(0), jen.Lit(4), jen.Lit(2), jen.LitRune(' '), jen.Lit(0)),
		jen.Qual("fmt", "Fprintln").Call(jen.Id("w"), jen.Lit("struct\tmember\tspec\tgo\t")),
		jen.Id("bad").Op(":=").Lit(0),
		jen.For(jen.List(jen.Id("_"), jen.Id("r")).Op(":=").Range().Id("rows")).Block(
			jen.Id("what").Op(":=").Id("r").Dot("field"),
			jen.If(jen.Id("what").Op("==").Lit("")).Block(jen.Id("what").Op("=").Lit("(size)")),
			jen.Id("mark").Op(":=").Lit(""),
			jen.If(jen.Id("r").Dot("want").Op("!=").Id("r").Dot("got")).Block(
				jen.Id("mark").Op(",").Id("bad").Op("=").Lit("MISMATCH").Op(",").Id("bad").Op("+").Lit(1),
			),
			jen.Qual("fmt", "Fprintf").Call(jen.Id("w"), jen.Lit("%s\t%s\t%d\t%d\t%s\n"), jen.Id("r").Dot("typ"), jen.Id("what"), jen.Id("r").Dot("want"), jen.Id("r").Dot("got"), jen.Id("mark")),
		),
		jen.Id("w").Dot("Flush").Call(),
		jen.If(jen.Id("bad").Op(">").Lit(0)).Block(
			jen.Id("t").Dot("Fatalf").Call(jen.Lit("%d of %d layout facts disagree with the spec:\n%s"), jen.Id("bad"), jen.Len(jen.Id("rows")), jen.Id("b").Dot("String").Call()),
		),
		jen.Id("t").Dot("Logf").Call(jen.Lit("%d layout facts hold:\n%s"), jen.Len(jen.Id("rows")), jen.Id("b").Dot("String").Call()),
	)
	f.Line()

	// Byte images: fill each field with a value whose first byte is distinct,
	// marshal, and check the byte at the field's spec offset.
	for _, st := range wireStructs(s) {
		name := GoName(st.Name)
		var fill, checks []jen.Code
		for i, fd := range st.Fields {
			if flexible(fd) {
				continue
			}
			mark := 0x10 + i
			set, ok := probeValue(fd.T, jen.Id("v").Dot(GoName(fd.StableName())), mark)
			if !ok {
				continue
			}
			fill = append(fill, set)
			checks = append(checks, jen.If(jen.Id("b").Index(jen.Lit(fd.Offset)).Op("!=").Lit(mark)).Block(
				jen.Id("t").Dot("Errorf").Call(jen.Lit(fmt.Sprintf("%s.%s: byte %d = %%#x, want %#x", st.Name, fd.Name, fd.Offset, mark)), jen.Id("b").Index(jen.Lit(fd.Offset))),
			))
		}
		if len(checks) == 0 {
			continue
		}
		body := []jen.Code{jen.Var().Id("v").Op(",").Id("back").Id(name)}
		body = append(body, fill...)
		body = append(body, jen.Id("b").Op(":=").Make(jen.Index().Byte(), jen.Id("Sizeof"+name)), jen.Id("v").Dot("MarshalTo").Call(jen.Id("b")))
		body = append(body, checks...)
		body = append(body,
			jen.Id("back").Dot("UnmarshalFrom").Call(jen.Id("b")),
			jen.If(jen.Id("back").Op("!=").Id("v")).Block(jen.Id("t").Dot("Errorf").Call(jen.Lit("round trip: got %+v, want %+v"), jen.Id("back"), jen.Id("v"))),
		)
		f.Func().Id("TestWire" + name).Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(body...)
		f.Line()
	}
	out, err := goFile("zlayout_test.go", f)
	return []File{out}, err
}

// probeValue sets v so that its first byte in the image is mark.
func probeValue(t *spec.Type, v *jen.Statement, mark int) (jen.Code, bool) {
	switch t.Kind {
	case spec.KindBool:
		return nil, false // a bool's byte is 0 or 1, not a mark
	case spec.KindChar, spec.KindInt, spec.KindEnum:
		return v.Clone().Op("=").Lit(mark), true
	case spec.KindArray:
		return probeValue(t.Elem, v.Clone().Index(jen.Lit(0)), mark)
	}
	return nil, false
}
