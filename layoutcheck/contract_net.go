package layoutcheck

import (
	"debug/elf"
	"fmt"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// CheckLibnccomNet checks the net plugin's side of the third boundary: the
// table objects libnccom dlsyms from it (spec release.toml
// [release.libnccom_net]) are exported as global data objects whose size is
// their type's. A missing bound table (the one the release's libnccom
// takes) or a table of another size is incompatible; a missing older table
// is compatible, since libnccom takes the newest it finds
// (docs/net-seam.md#plugin-choice).
func CheckLibnccomNet(o *elfread.File, sp *spec.Spec) ([]ContractCheck, error) {
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		return nil, err
	}
	c := &contract{}
	var fs []Finding
	objs := sp.Release.LibNCCOMNet.Objects
	found := 0
	for _, obj := range objs {
		s := t.Defined(obj.Name)
		if s == nil {
			sev, why := Compatible, "libnccom falls back to a newer table"
			if obj.Bound {
				sev, why = Incompatible, "it is the table the release's libnccom binds"
			}
			fs = append(fs, finding(sev, KindExport, obj.Name, obj.Name, "", "%s is not exported; %s", obj.Name, why))
			continue
		}
		found++
		if typ := elf.ST_TYPE(s.Info); typ != elf.STT_OBJECT {
			fs = append(fs, finding(Incompatible, KindExport, obj.Name, "OBJECT", typ.String(), "%s is exported as %v, not as a data object (libnccom reads it as a table)", obj.Name, typ))
		}
		if bind := elf.ST_BIND(s.Info); bind != elf.STB_GLOBAL {
			fs = append(fs, finding(Incompatible, KindExport, obj.Name, "GLOBAL", bind.String(), "%s is exported %v, not GLOBAL", obj.Name, bind))
		}
		st := sp.StructByName(spec.NetTableType(obj.Name))
		if st == nil {
			continue
		}
		if s.Size != uint64(st.Size) {
			fs = append(fs, finding(Incompatible, KindSize, obj.Name, fmt.Sprint(st.Size), fmt.Sprint(s.Size),
				"%s is %d bytes, its type %s is %d in the spec: libnccom would read its members at the wrong places", obj.Name, s.Size, st.Name, st.Size))
		}
	}
	if found == 0 && len(objs) > 0 {
		fs = append(fs, finding(Incompatible, KindExport, "", objs[0].Name, "", "no plugin table is exported: this is not a net plugin libnccom can use"))
	}
	c.rule(fmt.Sprintf("the %d plugin tables exported as data objects of their type's size", len(objs)), fs)
	return c.checks, nil
}
