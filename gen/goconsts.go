package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

func goConsts(s *spec.Spec) ([]File, error) {
	f := newGoFile(s)
	f.PackageComment(fmt.Sprintf("Package abi holds the Go bindings generated from the nrtabi spec of release %s:\n"+
		"constants, enums, exact messages, struct mirrors with compile-time layout\n"+
		"assertions, encoders for the byte images, and the symbol tables.", commentText(s.Release.Name)))
	r := s.Release
	f.Comment("Release identity.")
	f.Const().Defs(
		jen.Id("Release").Op("=").Lit(r.Name),
		// BuildTag is the tag a build of this release passes on to the go
		// commands it runs (docs/generator.md#building-for-a-release).
		jen.Id("BuildTag").Op("=").Lit(ReleaseTag(r.Name)),
		jen.Id("LibnrtSONAME").Op("=").Lit(r.LibNRT.SONAME),
		jen.Id("LibnrtBuildID").Op("=").Lit(r.LibNRT.BuildID),
		// LibnrtGit is the git hash of libnrt this release observed, "" when
		// it only carries its parent's (rule carried): a libnrt built for a
		// header-only release must not report 2.31.24's hash.
		jen.Id("LibnrtGit").Op("=").Lit(r.LibNRT.OwnGit()),
		// The versions the release describes ([release] runtime_version,
		// collectives_version), "" when its spec states none: libnrt reports
		// these, never numbers read off the release's name.
		jen.Id("LibnrtRuntimeVersion").Op("=").Lit(r.RuntimeVersion),
		jen.Id("CollectivesVersion").Op("=").Lit(r.CollectivesVersion),
		jen.Id("LibnccomSONAME").Op("=").Lit(r.LibNCCOM.SONAME),
		jen.Id("LibnccomBuildID").Op("=").Lit(r.LibNCCOM.BuildID),
		jen.Id("LibnccomGit").Op("=").Lit(r.LibNCCOM.Git),
	)
	f.Line()

	var defs []jen.Code
	for _, k := range s.Constants {
		c := jen.Id(GoName(k.Name))
		if v, ok := k.Str(); ok {
			c.Op("=").Lit(v)
		} else {
			v, _ := k.Int()
			t := map[string]string{"u32": "uint32", "u64": "uint64", "int": "int", "size_t": "uint64"}[k.Type]
			c.Id(t).Op("=").Lit(int(v))
		}
		defs = append(defs, c.Comment(commentText(fmt.Sprintf("%s %s", k.Name, k.Conf))))
	}
	f.Comment("Constants of the boundary.")
	f.Const().Defs(defs...)
	f.Line()

	defs = nil
	for _, m := range s.Messages {
		defs = append(defs, jen.Id("Msg"+GoName(m.ID)).Op("=").Lit(m.Text).Comment(commentText(m.Where)))
	}
	f.Comment("Exact messages of the shipped binaries, as printf formats.")
	f.Const().Defs(defs...)
	f.Line()

	for _, e := range s.Enums {
		goEnum(f, e)
	}
	out, err := goFile("zconsts.go", f)
	return []File{out}, err
}

// goEnumBase is the Go integer of an enum's size and sign, so a Go mirror
// of a struct holding it keeps the C layout (docs/generator.md#enums).
func goEnumBase(e spec.Enum) string {
	if e.Signed() {
		return fmt.Sprintf("int%d", e.Size*8)
	}
	return fmt.Sprintf("uint%d", e.Size*8)
}

func goEnum(f *jen.File, e spec.Enum) {
	name := GoName(e.Name)
	f.Commentf("%s is %s (%d bytes, %s).", name, e.Name, e.Size, e.Conf)
	f.Type().Id(name).Id(goEnumBase(e))
	if len(e.Values) == 0 {
		f.Line()
		return
	}
	var defs []jen.Code
	var cases []jen.Code
	seen := map[int64]bool{}
	for _, v := range e.Values {
		val := jen.Lit(int(v.Value))
		if v.AliasOf != "" {
			val = jen.Id(GoName(v.AliasOf)) // the alias stated, as in the C header
		}
		defs = append(defs, jen.Id(GoName(v.Name)).Id(name).Op("=").Add(val))
		if !seen[v.Value] {
			seen[v.Value] = true
			cases = append(cases, jen.Case(jen.Id(GoName(v.Name))).Block(jen.Return(jen.Lit(v.Name))))
		}
	}
	f.Const().Defs(defs...)
	f.Line()
	f.Commentf("String returns the C enumerator name.")
	f.Func().Params(jen.Id("v").Id(name)).Id("String").Params().String().Block(
		jen.Switch(jen.Id("v")).Block(cases...),
		jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit(e.Name+"(%d)"), jen.Id(goEnumBase(e)).Call(jen.Id("v")))),
	)
	f.Line()
}
