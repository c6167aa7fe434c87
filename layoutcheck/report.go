package layoutcheck

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

// Finding kinds (the JSON "kind" values).
const (
	KindSize          = "size"                   // struct size differs
	KindOffset        = "offset"                 // a known field moved
	KindFieldSize     = "field-size"             // a known field was resized
	KindType          = "type"                   // a known field was retyped
	KindBitfield      = "bitfield"               // a known field became a bitfield
	KindMissingField  = "missing-field"          // a known field is gone
	KindRenamed       = "renamed"                // same offset, size and type under another name
	KindTypeRenamed   = "type-renamed"           // a member's type has a new name and an identical layout
	KindFlexElem      = "flexible-array-element" // a flexible array's element type changed; size, offset, alignment did not
	KindAddedOpaque   = "added-in-opaque"        // a member inside an opaque range
	KindAdded         = "added"                  // a member the spec does not know, outside opaque ranges
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

// Finding is one difference between an input and the spec.
type Finding struct {
	Severity Severity `json:"severity"`
	Kind     string   `json:"kind"`
	Struct   string   `json:"struct,omitempty"`
	Field    string   `json:"field,omitempty"`
	Symbol   string   `json:"symbol,omitempty"`
	Expected string   `json:"expected,omitempty"`
	Actual   string   `json:"actual,omitempty"`
	Message  string   `json:"message"`
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
	Findings  []Finding `json:"findings"`
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
// "nrtabi.layoutcheck/1").
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
	Exit           int           `json:"exit"`
	Verdict        string        `json:"verdict"`
	StructsChecked int           `json:"structs_checked"` // spec structs found in some input and checked; the others are in Absent
	StructsInSpec  int           `json:"structs_in_spec"` // spec structs asked for: StructsChecked + len(Absent)
	Notes          []string      `json:"notes,omitempty"` // what the inputs needed worked around (headers that conflict)
}

// Schema is the JSON schema id.
const Schema = "nrtabi.layoutcheck/1"

func (r *Report) add(f Finding) {
	r.Findings = append(r.Findings, f)
	switch f.Severity {
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
		w = max(w, f.Severity)
	}
	return w
}
