package layoutcheck

import (
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// EnumResult is one spec enum found in one input's DWARF and graded
// against its spec row (docs/nrtabi-check.md#enums).
type EnumResult struct {
	Name      string    `json:"name"`
	Status    string    `json:"status"` // as StructResult's
	DWARFName string    `json:"dwarf_name,omitempty"`
	Via       string    `json:"via,omitempty"` // "enum TAG" or "typedef NAME"
	Size      int64     `json:"size"`          // the DWARF byte size
	SpecSize  int       `json:"spec_size"`
	Crosses   bool      `json:"crosses"` // a spec struct field or prototype uses it: a shift is incompatible
	Findings  []Finding `json:"findings"`
}

// enumNames are the names a spec enum may have in DWARF: its typedef name
// and its tag.
func enumNames(e *spec.Enum) []string {
	if e.Tag != "" && e.Tag != e.Name {
		return []string{e.Name, e.Tag}
	}
	return []string{e.Name}
}

// checkEnums finds the struct spec's enums in dbg and grades each with
// grade.EnumGrade, the grading diff uses: the spec row is the old side,
// the binary the new. An enum the input does not hold is not graded (a
// binary's DWARF keeps only the enums its code uses).
func checkEnums(dbg *elfread.Debug, opt Options) ([]*EnumResult, error) {
	enums := opt.Structs.Enums
	if len(enums) == 0 {
		return []*EnumResult{}, nil
	}
	wants := make([][]string, len(enums))
	for i := range enums {
		wants[i] = enumNames(&enums[i])
	}
	found, err := dbg.FindEnums(wants)
	if err != nil {
		return nil, err
	}
	types := dbg.Types()
	out := []*EnumResult{}
	structsCross := opt.Structs.Crossing()
	var specCross spec.Crossing
	if opt.Spec != nil {
		specCross = opt.Spec.Crossing()
	}
	for i := range enums {
		e := &enums[i]
		if found[i] == nil {
			continue
		}
		t, err := types.At(found[i].Offset)
		if err != nil {
			return nil, elfread.InputErrorf(dbg.Path(), "enum %s: %w", e.Name, err)
		}
		et := typemodel.Strip(t)
		if et == nil || et.Kind != typemodel.Enum {
			return nil, elfread.InputErrorf(dbg.Path(), "enum %s: the DIE at %#x is no enumeration type", e.Name, found[i].DIE)
		}
		crosses := structsCross.Crosses(e) || specCross.Crosses(e)
		res := &EnumResult{Name: e.Name, DWARFName: found[i].Name, Via: found[i].Via, Size: typemodel.SizeOf(et), SpecSize: e.Size, Crosses: crosses, Findings: []Finding{}}
		for _, c := range grade.EnumFold(grade.EnumGrade(grade.EnumFromSpec(e), enumOfDWARF(e.Name, et), crosses)) {
			res.Findings = append(res.Findings, enumFinding(c))
		}
		res.Status = statusOfSeverity(worst(res.Findings))
		(&structChecker{decl: map[string]*typemodel.Type{e.Name: et}}).locate(res.Findings, dbg) // its declaration (location.go)
		out = append(out, res)
	}
	return out, nil
}

// enumOfDWARF is the binary's side of an enum, under the spec's name.
func enumOfDWARF(name string, et *typemodel.Type) *grade.EnumSide {
	s := &grade.EnumSide{Name: name, Size: typemodel.SizeOf(et)}
	for _, v := range et.Enumerators {
		s.Values = append(s.Values, grade.EnumValue{Name: v.Name, Value: v.Value})
	}
	return s
}

// enumFinding is the one place an enum change becomes a Finding: Struct
// names the enum, Field the enumerator (first..last of a run of shifts),
// Expected and Actual the spec's and the binary's value, name or size.
func enumFinding(c grade.EnumChange) Finding {
	f := Finding{Kind: c.Kind, Grade: c.Kind, Struct: c.Enum, Field: c.Name, Expected: c.Old, Actual: c.New, Message: c.Message(), Severity: Compatible}
	if c.Severity == grade.EnumIncompatible {
		f.Severity = Incompatible
	}
	if len(c.Run) > 1 {
		f.Field = c.Run[0] + ".." + c.Run[len(c.Run)-1]
	}
	return f
}

// writeEnumsText is the enums section of one input in check's text report.
func (f *FileReport) writeEnumsText(w io.Writer, writeFact func(io.Writer, Finding)) {
	if len(f.Enums) == 0 {
		return
	}
	printf(w, "  enums (%d found)\n", len(f.Enums))
	for _, e := range f.Enums {
		printf(w, "    %-12s %-28s %7d B  %s\n", strings.ToUpper(e.Status), e.Name, e.Size, e.Via)
		for _, fd := range e.Findings {
			writeFact(w, fd)
		}
	}
}

// junitEnumCases are the enums of one input as JUnit test cases.
func (f *FileReport) junitEnumCases() []junitCase {
	var out []junitCase
	for _, e := range f.Enums {
		out = append(out, junitCaseOf("enum", e.Name, e.Findings))
	}
	return out
}

// absentEnums are the spec enums no input's DWARF holds, in spec order.
func absentEnums(files []*FileReport, s *spec.Spec) []string {
	seen := map[string]bool{}
	for _, f := range files {
		for _, e := range f.Enums {
			seen[e.Name] = true
		}
	}
	out := []string{}
	for _, e := range s.Enums {
		if !seen[e.Name] {
			out = append(out, e.Name)
		}
	}
	return out
}

func (r *Report) writeAbsentEnumsText(w io.Writer) {
	if len(r.AbsentEnums) > 0 {
		printf(w, "absent from every input (%d spec enums, not graded): %s\n", len(r.AbsentEnums), strings.Join(r.AbsentEnums, ", "))
	}
}

// foldEnumCauses puts a struct field's resize or move that follows from
// its enum's size change under that change, as diff does
// (grade.EnumSizeCause): one fact, its consequences under it.
func foldEnumCauses(facts []Finding, enums []*EnumResult, s *spec.Spec) (kept, folded []Finding) {
	cause := map[string]*Finding{}
	names := map[string]bool{}
	for _, e := range enums {
		for i := range e.Findings {
			if e.Findings[i].Kind == grade.EnumKindSize {
				cause[e.Name], names[e.Name] = &e.Findings[i], true
			}
		}
	}
	if len(cause) == 0 {
		return facts, nil
	}
	for _, f := range facts {
		if n := grade.EnumSizeCause(s.StructByName(f.Struct), f.Field, grade.Kind(f.Grade), names); n != "" {
			cause[n].Consequences = append(cause[n].Consequences, f)
			folded = append(folded, f)
			continue
		}
		kept = append(kept, f)
	}
	return kept, folded
}
