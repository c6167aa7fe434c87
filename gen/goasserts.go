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

// layoutRow is one asserted fact: a struct's size (Field and Opaque nil), a
// field's offset or an opaque range's.
type layoutRow struct {
	St     *spec.Struct
	Field  *spec.Field
	Opaque *spec.Opaque
	index  int // the opaque range's filler among the Go struct's fields
}

func (r layoutRow) want() int {
	switch {
	case r.Field != nil:
		return r.Field.Offset
	case r.Opaque != nil:
		return r.Opaque.Offset
	}
	return r.St.Size
}

// member names the row's member in the layout table ("" for the size).
func (r layoutRow) member() string {
	switch {
	case r.Field != nil:
		return r.Field.Name
	case r.Opaque != nil:
		return fmt.Sprintf("opaque %d..%d", r.Opaque.Offset, r.Opaque.End())
	}
	return ""
}

// actual is the Go expression for the measured value: unsafe.Sizeof(T{}) or
// unsafe.Offsetof(T{}.F), both compile-time constants, or for an opaque
// range, whose filler is a blank field unsafe.Offsetof cannot name, the
// offset reflect reports for the filler (a run-time value: zlayout_test.go
// only).
func (r layoutRow) actual() jen.Code {
	lit := jen.Id(GoName(r.St.Name)).Values()
	switch {
	case r.Field != nil:
		return jen.Qual("unsafe", "Offsetof").Call(lit.Dot(GoName(r.Field.StableName())))
	case r.Opaque != nil:
		return jen.Qual("reflect", "TypeOf").Call(lit).Dot("Field").Call(jen.Lit(r.index)).Dot("Offset")
	}
	return jen.Qual("unsafe", "Sizeof").Call(lit)
}

// constant reports whether actual is a compile-time constant.
func (r layoutRow) constant() bool { return r.Opaque == nil }

// layoutRows lists what the Go mirrors can assert: everything but packed
// images (checked by their encoders) and flexible array members.
func layoutRows(s *spec.Spec) []layoutRow {
	var rows []layoutRow
	for _, st := range structsInOrder(s) {
		if st.Packed {
			continue
		}
		rows = append(rows, layoutRow{St: st})
		first := 0
		if goAligned(st) {
			first = 1 // the alignment filler
		}
		for i, m := range goMembers(st) {
			switch {
			case m.Field != nil:
				rows = append(rows, layoutRow{St: st, Field: m.Field})
			case m.Opaque != nil:
				rows = append(rows, layoutRow{St: st, Opaque: m.Opaque, index: first + i})
			}
		}
	}
	return rows
}

// CountGoAsserts reports how many compile-time size and offset assertions
// the generated Go package carries for s.
func CountGoAsserts(s *spec.Spec) int {
	n := 0
	for _, r := range layoutRows(s) {
		if r.constant() {
			n++
		}
	}
	return n
}

func goAsserts(s *spec.Spec) ([]File, error) {
	f := newGoFile(s)
	f.HeaderComment("//go:build !" + NoAssertTag)
	f.Comment(fmt.Sprintf(`Compile-time layout assertions. Each constant is -(actual - spec), which
only compiles when actual == spec: a smaller value overflows uintptr as a
negative, a larger one once negated. Build with -tags %s and run the
package's tests to see the expected/actual table instead.`, NoAssertTag))
	var consts []jen.Code
	for _, r := range layoutRows(s) {
		if !r.constant() {
			continue // checked by zlayout_test.go
		}
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
