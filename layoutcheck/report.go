package layoutcheck

import (
	"fmt"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
)

// Severity of a finding. The values are the exit-status bits.
type Severity int

// Severities.
const (
	Info         Severity = 0
	Compatible   Severity = 4 // a rename (of a field or of a type with an identical layout), a new field inside an opaque range, a flexible array's element, an address
	Incompatible Severity = 8 // size, offset, type, missing or unversioned symbol, wrong need
)

func (s Severity) String() string {
	switch s {
	case Compatible:
		return "compatible"
	case Incompatible:
		return "incompatible"
	}
	return "info"
}

// MarshalText makes the JSON form a word.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Finding kinds (the JSON "kind" values). The struct-layout kinds are
// package grade's rules (docs/layoutcheck.md#one-grading) under check's
// names.
const (
	KindSize          = "size"                   // struct size differs
	KindOffset        = "offset"                 // a known field moved (a run of fields moved by one delta is one finding)
	KindFieldSize     = "field-size"             // a known field was resized
	KindType          = "type"                   // a known field was retyped
	KindBitfield      = "bitfield"               // a known field became a bitfield
	KindMissingField  = "missing-field"          // a known field is gone
	KindLaidOver      = "laid-over"              // a member the spec does not know over a spec field's bytes
	KindRenamed       = "renamed"                // same offset, size and type under another name
	KindTypeRenamed   = "type-renamed"           // a member's type has a new name and an identical layout
	KindFlexElem      = "flexible-array-element" // a flexible array's element type changed; size, offset, alignment did not
	KindPointerTarget = "pointer-target"         // a pointer to an undescribed type (void*, an opaque type) now points to another
	KindUnionWrap     = "union-wrap"             // int x -> union { int x; int y; }: same bytes, same type
	KindAddedOpaque   = "added-in-opaque"        // a member inside an opaque range
	KindAddedPadding  = "added-in-padding"       // a member in bytes no spec field holds, inside the struct
	KindAdded         = "added"                  // a member beyond the spec's end of the struct
	KindUndescribed   = "undescribed"            // a spec field's bytes are now an opaque range
	KindOpaqueBounds  = "opaque-bounds"          // an opaque range runs past the struct
	KindMissingStruct = "missing-struct"         // a --require'd struct is in no input
	KindSONAME        = "soname"
	KindVerdef        = "version-definition"
	KindExport        = "export"       // a symbol that must be defined is not, or not as a function
	KindUnversioned   = "unversioned"  // defined or imported without its version
	KindVersion       = "version"      // bound to the wrong version
	KindForbidden     = "forbidden"    // a symbol that must not be in the dynamic table
	KindNeeded        = "needed"       // DT_NEEDED wrong
	KindVersionNeed   = "version-need" // .gnu.version_r wrong
	KindImport        = "import"       // a required import is missing
	KindAddress       = "address"      // --addresses: differs from the release binary
	KindUnverified    = "unverified"   // --addresses: nothing to compare with
)

// Finding is one difference between an input and the spec: one fact,
// reported once.
type Finding struct {
	Severity Severity `json:"severity"`
	Kind     string   `json:"kind"`
	Struct   string   `json:"struct,omitempty"`
	Field    string   `json:"field,omitempty"`
	Symbol   string   `json:"symbol,omitempty"`
	Expected string   `json:"expected,omitempty"`
	Actual   string   `json:"actual,omitempty"`
	Message  string   `json:"message"`
	// Fields: an offset finding for a run of fields moved by the same
	// delta lists each (its Field is "first .. last"); Delta is the
	// distance, in bytes.
	Fields []string `json:"fields,omitempty"`
	Delta  int64    `json:"delta,omitempty"`
	// EmbeddedIn: where Struct is embedded by value in the structs checked
	// ("enc_glb_comm.comm.ring[0]").
	EmbeddedIn []string `json:"embedded_in,omitempty"`
	// Consequences: what this fact forces elsewhere (the struct's size, the
	// fields after it moving, the embedding fields' sizes), not counted as
	// facts of their own.
	Consequences []Finding `json:"consequences,omitempty"`
	// Grade is package grade's rule, the same word for the same fact in
	// check and diff.
	Grade string `json:"grade,omitempty"`
	// Location is where the DWARF says the struct or field is declared
	// (location.go); nil when it does not say.
	Location *Location `json:"location,omitempty"`
	// Waived: a waiver accepted the fact (waive.go, docs/waivers.md): it is
	// reported, counts for nothing, and SARIF carries it as a suppression
	// (docs/sarif.md#waivers). Waive marks it in every list that holds it,
	// which is where SARIF reads the facts (a struct's, an enum's, a rule's
	// Findings; Report.Findings for a missing struct).
	Waived *Waiver `json:"waived,omitempty"`
}

// Walk calls fn on f and each consequence under it, depth first.
func (f Finding) Walk(fn func(Finding, int)) { f.walk(fn, 0) }

func (f Finding) walk(fn func(Finding, int), depth int) {
	fn(f, depth)
	for _, c := range f.Consequences {
		c.walk(fn, depth+1)
	}
}

var checkKinds = sync.OnceValue(func() map[grade.Kind]string {
	return map[grade.Kind]string{
		grade.Size: KindSize, grade.Moved: KindOffset, grade.Resized: KindFieldSize, grade.Retyped: KindType,
		grade.Bitfield: KindBitfield, grade.Removed: KindMissingField, grade.LaidOver: KindLaidOver, grade.Added: KindAdded,
		grade.OpaqueBounds: KindOpaqueBounds, grade.Renamed: KindRenamed, grade.TypeRenamed: KindTypeRenamed,
		grade.FlexElem: KindFlexElem, grade.PointerTarget: KindPointerTarget, grade.UnionWrap: KindUnionWrap,
		grade.AddedOpaque: KindAddedOpaque, grade.AddedPadding: KindAddedPadding, grade.Undescribed: KindUndescribed,
	}
})

// fromGrade words a grade finding (spec: old side; binary: new side).
func fromGrade(g *grade.Finding) Finding {
	f := Finding{Severity: Severity(g.Severity), Kind: checkKinds()[g.Kind], Grade: string(g.Kind), Struct: g.Struct, Field: g.Field,
		Expected: g.Old, Actual: g.New, Fields: g.Fields, Delta: g.Delta, EmbeddedIn: g.EmbeddedIn}
	path := g.Path()
	detail := ""
	if g.Detail != "" {
		detail = " (" + g.Detail + ")"
	}
	f.Message = checkMessage(g, path, detail)
	for _, c := range g.Consequences {
		f.Consequences = append(f.Consequences, fromGrade(c))
	}
	return f
}

// checkMessage words a fact as check has worded it: the binary's side
// against the spec's.
func checkMessage(g *grade.Finding, path, detail string) string {
	switch g.Kind {
	case grade.Size:
		return fmt.Sprintf("%s: size %s B, spec %s B%s", path, g.New, g.Old, detail)
	case grade.Moved:
		if len(g.Fields) > 1 {
			return fmt.Sprintf("%s: moved %+d (%s; --verbose lists each)", path, g.Delta, g.Detail)
		}
		return fmt.Sprintf("%s: offset %s, spec %s (field moved), %+d B", path, g.New, g.Old, g.Delta)
	case grade.Resized:
		return fmt.Sprintf("%s: size %d B, spec %d B (field resized: %s, spec %s)", path, g.NewSize, g.OldSize, g.NewType.Show(), g.OldType.Show())
	case grade.Retyped:
		why := ""
		if g.Detail != "" {
			why = "; " + g.Detail
		}
		return fmt.Sprintf("%s: type %s, spec %s (field retyped%s)", path, orNone(g.New), g.Old, why)
	case grade.Renamed:
		return fmt.Sprintf("%s: renamed to %s (same offset %d, size %d, type %s)", path, g.New, g.NewOffset, g.NewSize, g.OldType.Show())
	case grade.TypeRenamed:
		return fmt.Sprintf("%s: type renamed %s -> %s%s", path, g.Old, g.New, detail)
	case grade.FlexElem:
		return fmt.Sprintf("%s: flexible array of %s, spec %s%s", path, g.NewType.Elem.Show(), g.OldType.Elem.Show(), detail)
	case grade.PointerTarget:
		return fmt.Sprintf("%s: pointer %s, spec %s%s", path, g.New, g.Old, detail)
	case grade.Bitfield:
		return fmt.Sprintf("%s: now a %s, spec %s", path, g.New, g.Old)
	case grade.Removed:
		return fmt.Sprintf("%s: missing (spec %s)%s", path, g.Old, detail)
	case grade.AddedOpaque:
		return fmt.Sprintf("%s: new member inside the %s (%s, %d B)", path, strings.Replace(g.Old, "opaque ", "opaque range ", 1), g.New, g.NewSize)
	case grade.LaidOver:
		return fmt.Sprintf("%s: member the spec does not know (%s, %d B), laid over the spec field %s", path, g.New, g.NewSize, g.Old)
	case grade.AddedPadding:
		return fmt.Sprintf("%s: member the spec does not know (%s, %d B), in bytes no spec field holds", path, g.New, g.NewSize)
	case grade.Added:
		return fmt.Sprintf("%s: member the spec does not know (%s, %d B), beyond the spec's end of the struct", path, g.New, g.NewSize)
	case grade.OpaqueBounds:
		return fmt.Sprintf("%s: %s", path, g.Detail)
	}
	return fmt.Sprintf("%s: %s, spec %s%s", path, orNone(g.New), orNone(g.Old), detail)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// The statuses of a StructResult.
const (
	StatusOK           = "ok"
	StatusCompatible   = "compatible"
	StatusIncompatible = "incompatible"
)

// StructResult is one spec struct found in one input and checked.
type StructResult struct {
	Name      string `json:"name"`
	Status    string `json:"status"` // StatusOK, StatusCompatible or StatusIncompatible: the worst finding (a struct absent from an input has no result; see Report.Absent)
	DWARFName string `json:"dwarf_name,omitempty"`
	Via       string `json:"via,omitempty"`
	DIE       string `json:"die,omitempty"`
	Size      int64  `json:"size,omitempty"`
	SpecSize  int    `json:"spec_size"`
	// DWARFFile is the file the struct's DIE was read from and DWARFVia how
	// that file was found (embedded, build-id, gnu_debuglink, debuginfod,
	// supplementary, dwo, dwp).
	DWARFFile string    `json:"dwarf_file,omitempty"`
	DWARFVia  string    `json:"dwarf_via,omitempty"`
	Findings  []Finding `json:"findings"` // the facts defined at this struct
	// Through names the facts of structs embedded in this one that change
	// it ("enc_ring_t.seq (at enc_glb_comm_t.spare_ring)"); they are
	// reported at their own struct.
	Through []string `json:"through,omitempty"`
	// Unresolved are the declarations the struct holds by value that no
	// definition could replace (unresolved.go): its layout around them is
	// not known.
	Unresolved []UnresolvedDecl `json:"unresolved,omitempty"`
}

// SkippedInput is a walked entry that was not read, and why
// (package inputs).
type SkippedInput struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// DWARFPart is a file besides DWARFFile that the input's DWARF was read
// from: a dwz supplementary file, a .dwo, a unit of a .dwp.
type DWARFPart struct {
	File string `json:"file"`
	Via  string `json:"via"`
}

// ContractCheck is one rule of the link contract.
type ContractCheck struct {
	Name     string    `json:"name"`
	OK       bool      `json:"ok"`
	Findings []Finding `json:"findings"`
}

// FileReport is everything checked in one input.
type FileReport struct {
	Path      string `json:"path"`
	ELFKind   string `json:"elf_kind"`
	BuildID   string `json:"build_id,omitempty"`
	SONAME    string `json:"soname,omitempty"`
	DWARFFile string `json:"dwarf_file,omitempty"`
	DWARFVia  string `json:"dwarf_via,omitempty"`
	// DWARFParts: the other files the DWARF was read from; DWARFMissing:
	// the ones it refers to that were not found (--allow-missing-debug).
	DWARFParts   []DWARFPart     `json:"dwarf_parts,omitempty"`
	DWARFMissing []string        `json:"dwarf_missing,omitempty"`
	Role         string          `json:"role"`
	RoleFrom     string          `json:"role_from"`
	Structs      []*StructResult `json:"structs"`
	Enums        []*EnumResult   `json:"enums"` // spec enums found in the input's DWARF (enumcheck.go)
	Contract     []ContractCheck `json:"contract"`
}

// Report is the result of one check run. Its JSON form is the stable schema
// documented in docs/nrtabi-check.md#json-output (schema
// "nrtabi.layoutcheck/2").
type Report struct {
	Schema         string        `json:"schema"`
	Release        string        `json:"release"`
	StructSpec     string        `json:"struct_spec"`
	Files          []*FileReport `json:"files"`
	Absent         []string      `json:"absent_structs"`
	AbsentEnums    []string      `json:"absent_enums"` // spec enums in no input's DWARF (enumcheck.go): not graded
	Required       []string      `json:"required_structs"`
	Findings       []Finding     `json:"findings"` // every finding of every file, plus missing required structs
	Compatible     int           `json:"compatible"`
	Incompat       int           `json:"incompatible"`
	Waived         int           `json:"waived"` // facts a waiver accepted (waive.go), in neither count above
	Exit           int           `json:"exit"`
	Verdict        string        `json:"verdict"`
	StructsChecked int           `json:"structs_checked"` // spec structs found in some input and checked; the others are in Absent
	StructsInSpec  int           `json:"structs_in_spec"` // spec structs asked for: StructsChecked + len(Absent)
	Notes          []string      `json:"notes,omitempty"` // what the inputs needed worked around (headers that conflict)
	// Skipped: entries of walked directories that were not read (not an
	// ELF file, unreadable, a symbolic link not followed), in input order.
	Skipped []SkippedInput `json:"skipped,omitempty"`
	// Verbose: the text lists every field of a moved run.
	Verbose bool `json:"-"`
}

// Schema is the JSON schema id. /2: each fact once, at the
// struct that defines it, with embedded_in, consequences, and moved runs
// as one finding with fields and delta; counts are facts.
const Schema = "nrtabi.layoutcheck/2"

func (r *Report) add(f Finding) {
	r.Findings = append(r.Findings, f)
	r.count(f)
}

func (r *Report) count(f Finding) {
	// A fact counts once, at the worst of it and what it forces.
	switch worst([]Finding{f}) {
	case Compatible:
		r.Compatible++
		r.Exit |= int(Compatible)
	case Incompatible:
		r.Incompat++
		r.Exit |= int(Incompatible)
	}
}

func worst(fs []Finding) Severity {
	w := Info
	for _, f := range fs {
		f.Walk(func(c Finding, _ int) { w = max(w, c.Severity) })
	}
	return w
}
