package layoutcheck

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/layoutcheck/grade"
)

// The SARIF form of a check (docs/sarif.md), for code scanning: one
// result per fact, its rule the finding's kind, its level the fact's
// grade, its location where the DWARF declares the struct or field, its
// consequences as related locations. The log is render's, the one SARIF
// writer (diff's too).

// checkedHook, when set, sees every report CheckInputs returns: the
// package's tests hold the SARIF form of each to the schema
// (sarif_test.go).
var checkedHook func(*Report)

// kindRules says what each kind of finding is, for the rule SARIF lists.
var kindRules = sync.OnceValue(func() map[string]string {
	return map[string]string{
		KindSize: "a struct's size differs from the spec's", KindOffset: "a field the spec knows moved",
		KindFieldSize: "a field the spec knows was resized", KindType: "a field the spec knows was retyped",
		KindBitfield: "a field the spec knows became a bitfield", KindMissingField: "a field the spec knows is gone",
		KindLaidOver: "a member the spec does not know lies over a spec field's bytes", KindRenamed: "a field has a new name, same offset, size and type",
		KindTypeRenamed: "a member's type has a new name and an identical layout", KindFlexElem: "a flexible array's element type changed",
		KindPointerTarget: "a pointer to an undescribed type now points to another", KindUnionWrap: "a field is now one member of a union over the same bytes",
		KindAddedOpaque: "a new member inside an opaque range", KindAddedPadding: "a new member in bytes no spec field holds",
		KindAdded: "a new member beyond the spec's end of the struct", KindUndescribed: "a spec field's bytes are now an opaque range",
		KindOpaqueBounds: "an opaque range runs past the struct", KindMissingStruct: "a --require'd struct is in no input",
		KindSONAME: "the library's SONAME is not the contract's", KindVerdef: "a version definition is not the contract's",
		KindExport: "a symbol that must be defined is not, or not as a function", KindUnversioned: "a symbol is defined or imported without its version",
		KindVersion: "a symbol is bound to the wrong version", KindForbidden: "a symbol that must not be in the dynamic table is",
		KindNeeded: "DT_NEEDED is not the contract's", KindVersionNeed: ".gnu.version_r is not the contract's",
		KindImport: "a required import is missing", KindAddress: "an address differs from the release binary's",
		KindUnverified:      "an address had nothing to be compared with",
		grade.EnumKindAdded: "an enum is new", grade.EnumKindRemoved: "an enum is gone", grade.EnumKindSize: "an enum's underlying size changed",
		grade.EnumKindValueAdded: "an enumerator is new", grade.EnumKindValueRemoved: "an enumerator is gone",
		grade.EnumKindRenamed: "an enumerator has a new name, same value", grade.EnumKindShifted: "an enumerator has a new value",
		grade.EnumKindAlias: "an enumerator aliases another enumerator than before",
	}
})

// Level is the SARIF level of a fact's grade: incompatible is an error
// (the pairing breaks), compatible a warning (the boundary holds, but
// the default --fail-on fails on it), informational a note
// (docs/sarif.md#levels).
func (s Severity) Level() string {
	switch s {
	case Incompatible:
		return render.LevelError
	case Compatible:
		return render.LevelWarning
	}
	return render.LevelNote
}

// SARIF is the report as a SARIF run: version is nrtabi's, sourceRoot
// the directory uris are relative to ("" for absolute file uris).
func (r *Report) SARIF(version, sourceRoot string) render.SARIFRun {
	run := render.SARIFRun{Tool: "nrtabi", Version: version, InformationURI: "https://github.com/nrtabi/nrtabi", SourceRoot: sourceRoot,
		Properties: map[string]any{"command": "check", "release": r.Release, "verdict": r.Verdict, "exit": r.Exit, "structs_checked": r.StructsChecked}}
	run.Anchor = r.anchor()
	used := map[string]Severity{}
	add := func(input, module string, f Finding) {
		run.Findings = append(run.Findings, sarifResult(input, module, f))
		used[f.Kind] = max(used[f.Kind], worst([]Finding{f}))
	}
	for _, fr := range r.Files {
		module := filepath.Base(fr.Path)
		if fr.SONAME != "" {
			module = fr.SONAME
		}
		for _, st := range fr.Structs {
			for _, f := range st.Findings {
				add(fr.Path, module, f)
			}
		}
		for _, e := range fr.Enums {
			for _, f := range e.Findings {
				add(fr.Path, module, f)
			}
		}
		for _, c := range fr.Contract {
			for _, f := range c.Findings {
				add(fr.Path, module, f)
			}
		}
	}
	for _, f := range r.Findings {
		if f.Kind == KindMissingStruct {
			add("", "", f)
		}
	}
	kinds := make([]string, 0, len(used))
	for k := range used {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		short := kindRules()[k]
		if short == "" {
			short = "a check finding of kind " + k
		}
		run.Rules = append(run.Rules, render.SARIFRule{ID: k, Short: short, Level: used[k].Level(),
			Full: "nrtabi check: " + short + " (docs/nrtabi-check.md, the finding kinds)."})
	}
	return run
}

// anchor is where a fact with no declaration (a symbol, a SONAME, a
// struct in no input) is shown: the first input that is a file, else
// (headers) the first file a fact is declared in.
func (r *Report) anchor() string {
	for _, fr := range r.Files {
		if st, err := os.Stat(fr.Path); err == nil && st.Mode().IsRegular() {
			if abs, err := filepath.Abs(fr.Path); err == nil {
				return abs
			}
		}
	}
	for _, f := range r.Findings {
		if f.Location != nil && f.Location.File != "" {
			return f.Location.File
		}
	}
	return ""
}

// WriteSARIF prints the report as a SARIF 2.1.0 log.
func (r *Report) WriteSARIF(w io.Writer, version, sourceRoot string) error {
	return render.SARIF(w, r.SARIF(version, sourceRoot))
}

// sarifResult is one fact as a result: module names the input (its
// SONAME, or its file's name), which with the rule and the logical name
// keys the fingerprint, so that it does not change with a line number, a
// value, or where the input was read from.
func sarifResult(input, module string, f Finding) render.SARIFResult {
	place := sarifPlace(module, f)
	res := render.SARIFResult{RuleID: f.Kind, Level: worst([]Finding{f}).Level(), Message: f.Message, Place: place,
		Key:        module + "\x00" + logicalName(f),
		Properties: map[string]any{"severity": f.Severity.String()}}
	if input != "" {
		res.Properties["input"] = input
	}
	if f.Grade != "" {
		res.Properties["grade"] = f.Grade
	}
	for _, c := range f.Consequences {
		c.Walk(func(x Finding, _ int) {
			res.Related = append(res.Related, render.Related{Message: x.Message, Place: sarifPlace(module, x)})
		})
	}
	res.Waived = f.Waived
	return res
}

func logicalName(f Finding) string {
	switch {
	case f.Struct != "" && f.Field != "":
		return f.Struct + "." + f.Field
	case f.Struct != "":
		return f.Struct
	case f.Symbol != "":
		return f.Symbol
	}
	return f.Kind
}

// sarifPlace is a finding's location: its declaration when known, and
// its logical names (the field in its struct, or the struct, or the
// symbol in the input) always.
func sarifPlace(module string, f Finding) render.Place {
	var p render.Place
	if f.Location != nil {
		p.File, p.Line, p.Unresolved = f.Location.File, f.Location.Line, f.Location.Unresolved
	}
	switch {
	case f.Struct != "" && f.Field != "":
		p.Logical = []render.Logical{{Name: f.Field, FullyQualifiedName: f.Struct + "." + f.Field, Kind: "member"}}
	case f.Struct != "":
		p.Logical = []render.Logical{{Name: f.Struct, FullyQualifiedName: f.Struct, Kind: "type"}}
	case f.Symbol != "":
		p.Logical = []render.Logical{{Name: f.Symbol, FullyQualifiedName: module + "!" + f.Symbol, Kind: "function"}}
	case module != "":
		p.Logical = []render.Logical{{Name: module, FullyQualifiedName: module, Kind: "module"}}
	}
	return p
}
