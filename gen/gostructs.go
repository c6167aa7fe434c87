package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// goStructs mirrors every spec struct in Go: natural member types in spec
// order, filler only for opaque ranges, as in the C header. Go computes the
// layout; zasserts.go compares it with the spec at compile time.
func goStructs(s *spec.Spec, p presence) ([]File, error) {
	f := newGoFile(s)
	f.Comment("PthreadMutex has the size and alignment of glibc's pthread_mutex_t on x86-64.")
	f.Type().Id("PthreadMutex").Index(jen.Lit(5)).Uint64()
	f.Line()
	f.Comment("StdVector is libstdc++'s std::vector<T>: three pointers into C-owned memory.")
	f.Type().Id("StdVector").Struct(
		jen.Id("Start").Uintptr(),
		jen.Id("Finish").Uintptr(),
		jen.Id("EndOfStorage").Uintptr(),
	)
	f.Line()
	f.Comment("CPUSet has the size and alignment of glibc's cpu_set_t.")
	f.Type().Id("CPUSet").Index(jen.Lit(16)).Uint64()
	f.Line()
	var sizes []jen.Code
	for _, st := range structsInOrder(s) {
		f.Add(goStruct(st, p))
		f.Line()
		for _, a := range accessors(s, st, p) {
			f.Add(a)
			f.Line()
		}
		for _, a := range presenceAccessors(p, st) {
			f.Add(a)
			f.Line()
		}
		sizes = append(sizes, jen.Id("Sizeof"+GoName(st.Name)).Op("=").Lit(st.Size))
	}
	f.Comment("Sizes from the spec. For packed byte images these are the image sizes.")
	f.Const().Defs(sizes...)
	out, err := goFile("zstructs.go", f)
	return []File{out}, err
}

func goStruct(st *spec.Struct, p presence) jen.Code {
	name := GoName(st.Name)
	doc := []string{commentText(fmt.Sprintf("%s mirrors %s (%d bytes, %s).", name, st.Name, st.Size, st.Conf))}
	if st.Packed {
		doc = append(doc, "It is a packed byte image: Go cannot lay it out, so use MarshalTo and UnmarshalFrom.")
	}
	if st.Prefix {
		doc = append(doc, "Only a prefix of the real object is modelled.")
	}
	for _, name := range p.ofStruct(st) {
		if a := st.AbsentByName(name); a != nil && stableField(st, name) == nil {
			doc = append(doc, commentText(fmt.Sprintf("It has no %s (%s): Has%s reports false (docs/generator.md#absent-fields).", name, a.Type, GoName(name))))
		}
	}
	var fields []jen.Code
	if goAligned(st) {
		fields = append(fields, goAlignFiller(st.MinAlign))
	}
	for _, m := range goMembers(st) {
		switch {
		case m.isPadding():
			fields = append(fields, jen.Id("_").Index(jen.Lit(m.Size)).Byte().Comment(fmt.Sprintf("+%d..%d padding", m.At, m.At+m.Size)))
		case m.Opaque != nil:
			o := m.Opaque
			fields = append(fields, jen.Id("_").Index(jen.Lit(o.Size)).Byte().Comment(fmt.Sprintf("+%d..%d opaque", o.Offset, o.End())))
		default:
			fd := m.Field
			fields = append(fields, jen.Id(GoName(fd.StableName())).Add(goType(fd.T)).Comment(commentText(fmt.Sprintf("+%d %s %s", fd.Offset, fd.Type, fd.Conf))))
		}
	}
	for _, fd := range st.Fields {
		if flexible(fd) {
			doc = append(doc, commentText(fmt.Sprintf("The flexible array member %s (+%d, %s) has no Go form and adds no size.", fd.Name, fd.Offset, fd.Type)))
		}
	}
	return jen.Comment(strings.Join(doc, "\n")).Line().Type().Id(name).Struct(fields...)
}

// goMembers are the members of st's Go mirror after its alignment filler,
// in order: placeMembers without the flexible array member Go cannot
// express. goOpaqueRows finds an opaque range's Go field by its index here.
func goMembers(st *spec.Struct) []placed {
	var out []placed
	for _, m := range placeMembers(st) {
		if m.Field == nil || !flexible(*m.Field) {
			out = append(out, m)
		}
	}
	return out
}

// goAligned reports whether st's Go mirror starts with an alignment filler.
func goAligned(st *spec.Struct) bool {
	natural := 1
	for _, fd := range st.Fields {
		natural = max(natural, fd.T.Align())
	}
	return st.MinAlign > natural && !st.Packed
}
