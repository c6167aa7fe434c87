package gen

import (
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/nrtabi/nrtabi/spec"
)

// goTables emits the symbol tables as Go data: the forward rows in dlsym
// order, the reverse rows, and the version graph.
func goTables(s *spec.Spec) ([]File, error) {
	f := newGoFile(s)
	t := s.SlotTable
	f.Comment("The forward slot table.")
	f.Const().Defs(
		jen.Id("SlotBase").Op("=").Add(hex(t.Base)),
		jen.Id("SlotTop").Op("=").Add(hex(t.Top)),
		jen.Id("SlotStride").Op("=").Lit(int(t.Stride)),
		jen.Id("NumForward").Op("=").Lit(len(s.Forward)),
		jen.Id("NumReverse").Op("=").Lit(len(s.Reverse)),
	)
	f.Line()
	f.Comment("Guard kinds of a forward trampoline.")
	f.Const().Defs(
		jen.Id("Guarded").Op("=").Lit(spec.Guarded),
		jen.Id("Probe").Op("=").Lit(spec.Probe),
		jen.Id("Hot").Op("=").Lit(spec.Hot),
	)
	f.Line()
	f.Comment("ForwardSymbol is a neuron* dlsym target and its nccl* trampoline.")
	f.Type().Id("ForwardSymbol").Struct(
		jen.Id("Index").Int(),
		jen.Id("Name").String(),
		jen.Id("Trampoline").String(),
		jen.Id("Group").String(),
		jen.Id("Guard").String(),
		jen.Id("Slot").Uint64(),
		jen.Id("NCCOMAddr").Uint64(),
		jen.Id("TrampolineAddr").Uint64(),
	)
	f.Line()
	var rows []jen.Code
	for _, fw := range s.ByIndex() {
		rows = append(rows, jen.Values(jen.Dict{
			jen.Id("Index"):          jen.Lit(fw.Index),
			jen.Id("Name"):           jen.Lit(fw.Name),
			jen.Id("Trampoline"):     jen.Lit(fw.Trampoline),
			jen.Id("Group"):          jen.Lit(fw.Group),
			jen.Id("Guard"):          jen.Lit(fw.Guard),
			jen.Id("Slot"):           hex(fw.Slot),
			jen.Id("NCCOMAddr"):      hex(fw.NCCOMAddr),
			jen.Id("TrampolineAddr"): hex(fw.TrampolineAddr),
		}))
	}
	f.Comment("Forward lists the forward rows in dlsym order.")
	f.Var().Id("Forward").Op("=").Index(jen.Id("NumForward")).Id("ForwardSymbol").Values(rows...)
	f.Line()

	f.Comment("ReverseSymbol is a callback libnrt exports and libnccom imports.")
	f.Type().Id("ReverseSymbol").Struct(
		jen.Id("Name").String(),
		jen.Id("Version").String(),
		jen.Id("Group").String(),
		jen.Id("Shape").String(),
		jen.Id("Addr").Uint64(),
	)
	rows = nil
	for _, r := range s.Reverse {
		rows = append(rows, jen.Values(jen.Dict{
			jen.Id("Name"):    jen.Lit(r.Name),
			jen.Id("Version"): jen.Lit(r.Version),
			jen.Id("Group"):   jen.Lit(r.Group),
			jen.Id("Shape"):   jen.Lit(r.Shape),
			jen.Id("Addr"):    hex(r.Addr),
		}))
	}
	f.Comment("Reverse lists the reverse rows in spec order.")
	f.Var().Id("Reverse").Op("=").Index(jen.Id("NumReverse")).Id("ReverseSymbol").Values(rows...)
	f.Line()

	f.Comment("VersionNode is one of libnrt's ELF version definitions.")
	f.Type().Id("VersionNode").Struct(
		jen.Id("Name").String(),
		jen.Id("Index").Int(),
		jen.Id("Base").Bool(),
		jen.Id("Parent").String(),
	)
	rows = nil
	for _, n := range s.VersionNodes {
		rows = append(rows, jen.Values(jen.Dict{
			jen.Id("Name"):   jen.Lit(n.Name),
			jen.Id("Index"):  jen.Lit(n.Index),
			jen.Id("Base"):   jen.Lit(n.Base),
			jen.Id("Parent"): jen.Lit(n.Parent),
		}))
	}
	f.Comment("VersionNodes is libnrt's version-definition graph.")
	f.Var().Id("VersionNodes").Op("=").Index(jen.Op("...")).Id("VersionNode").Values(rows...)
	out, err := goFile("ztables.go", f)
	return []File{out}, err
}

// hex renders an unsigned literal in hexadecimal.
func hex(v uint64) jen.Code { return jen.Op(hexString(v)) }

func hexString(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
