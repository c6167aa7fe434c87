package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// GoPackage is the name of the generated Go package of each release.
const GoPackage = "abi"

func newGoFile(s *spec.Spec) *jen.File {
	f := jen.NewFile(GoPackage)
	f.HeaderComment(goBanner(s))
	return f
}

func goFile(path string, f *jen.File) (File, error) {
	var b []byte
	buf := &bytesWriter{}
	if err := f.Render(buf); err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	b = buf.b
	return File{Path: GoPackage + "/" + path, Data: b}, nil
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// goType is the Go spelling of a spec type inside a mirror struct. Pointers
// become uintptr: the mirrors describe C-owned memory, which the Go garbage
// collector must not trace.
func goType(t *spec.Type) jen.Code {
	switch t.Kind {
	case spec.KindPointer:
		return jen.Uintptr()
	case spec.KindArray:
		return jen.Index(jen.Lit(t.Len)).Add(goType(t.Elem))
	case spec.KindStruct:
		return jen.Id(GoName(t.Struct.Name))
	case spec.KindEnum:
		return jen.Id(GoName(t.Enum.Name))
	case spec.KindVector:
		return jen.Id("StdVector")
	}
	_, g, _ := spec.Builtin(t.Name)
	return jen.Id(g)
}

// goAlignFiller is a zero-size field that raises a struct's alignment to n.
func goAlignFiller(n int) jen.Code {
	elem := map[int]string{2: "uint16", 4: "uint32", 8: "uint64"}[n]
	return jen.Id("_").Index(jen.Lit(0)).Id(elem).Comment(fmt.Sprintf("aligns the struct to %d bytes", n))
}

// flexible reports a flexible array member, which Go cannot express.
func flexible(f spec.Field) bool { return f.T.Kind == spec.KindArray && f.T.Len < 0 }
