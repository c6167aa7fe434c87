package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// NoAssertTag builds the generated package without its compile-time layout
// assertions, so that zlayout_test.go can print the expected/actual table of
// a spec that Go disagrees with.
const NoAssertTag = "nrtabi_noassert"

// layoutRow is one asserted fact: a struct's size (Field == nil) or a field's offset.
type layoutRow struct {
	St    *spec.Struct
	Field *spec.Field
}

func (r layoutRow) want() int {
	if r.Field == nil {
		return r.St.Size
	}
	return r.Field.Offset
}

// actual is the Go expression for the measured value: unsafe.Sizeof(T{}) or
// unsafe.Offsetof(T{}.F), both compile-time constants.
func (r layoutRow) actual() jen.Code {
	lit := jen.Id(GoName(r.St.Name)).Values()
	if r.Field == nil {
		return jen.Qual("unsafe", "Sizeof").Call(lit)
	}
	return jen.Qual("unsafe", "Offsetof").Call(lit.Dot(GoName(r.Field.StableName())))
}

// layoutRows lists what the Go mirrors can assert: everything but packed
// images (checked by their encoders) and flexible array members.
func layoutRows(s *spec.Spec) []layoutRow {
	var rows []layoutRow
	for _, st := range structsInOrder(s) {
		if st.Packed {
			continue
		}
		rows = append(rows, layoutRow{St: st})
		for i := range st.Fields {
			if !flexible(st.Fields[i]) {
				rows = append(rows, layoutRow{St: st, Field: &st.Fields[i]})
			}
		}
	}
	return rows
}

// CountGoAsserts reports how many compile-time size and offset assertions
// the generated Go package carries for s.
func CountGoAsserts(s *spec.Spec) int { return len(layoutRows(s)) }

func goAsserts(s *spec.Spec) ([]File, error) {
	f := newGoFile(s)
	f.HeaderComment("//go:build !" + NoAssertTag)
	f.Comment(fmt.Sprintf(`Compile-time layout assertions. Each constant is -(actual - spec), which
only compiles when actual == spec: a smaller value overflows uintptr as a
negative, a larger one once negated. Build with -tags %s and run the
package's tests to see the expected/actual table instead.`, NoAssertTag))
	var consts []jen.Code
	for _, r := range layoutRows(s) {
		what := r.St.Name + " size"
		if r.Field != nil {
			what = r.St.Name + "." + r.Field.Name + " offset"
		}
		consts = append(consts, jen.Id("_").Op("=").Op("-").Parens(jen.Add(r.actual()).Op("-").Lit(r.want())).
			Comment(fmt.Sprintf("%s %d", what, r.want())))
	}
	f.Const().Defs(consts...)
	out, err := goFile("zasserts.go", f)
	return []File{out}, err
}
