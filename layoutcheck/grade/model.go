// Package grade holds the one grading of struct layouts: every rule that
// says whether a layout change is compatible, incompatible or only
// informational, for nrtabi check (a spec against a binary's DWARF) and
// nrtabi diff (a spec against a spec). Both describe their two sides in the
// small neutral model below (FromSpec here; layoutcheck converts DWARF), and
// Grader compares them, so a rule is written once and both commands grade a
// fact alike (docs/layoutcheck.md#one-grading).
//
// A finding is reported once, at the struct that defines the changed
// member, with the places that embed that struct; what a change forces on
// the layouts around it (the enclosing struct grew, the members after it
// moved) is folded under it as a consequence.
package grade

// Severity of a finding; the values are the exit-status bits check and
// diff share.
type Severity int

// Severities.
const (
	Info         Severity = 0
	Compatible   Severity = 4
	Incompatible Severity = 8
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

// Kind names a rule. check and diff print their own names for it (their
// JSON kinds predate this package); the rule and its severity are here.
type Kind string

// The kinds, with the severity each grades to.
const (
	Size          Kind = "size"                   // incompatible (informational when both sides model a prefix)
	Moved         Kind = "moved"                  // incompatible; a run of members moved by one delta is one finding
	Resized       Kind = "resized"                // incompatible
	Retyped       Kind = "retyped"                // incompatible
	Bitfield      Kind = "bitfield"               // incompatible: a member became (part of) a bitfield
	Removed       Kind = "removed"                // incompatible
	LaidOver      Kind = "laid-over"              // incompatible: an unknown member over an old member's bytes
	Added         Kind = "added"                  // incompatible: a member beyond the old end
	OpaqueBounds  Kind = "opaque-bounds"          // incompatible: an opaque range runs past the struct
	Renamed       Kind = "renamed"                // compatible: same offset and type under another name
	TypeRenamed   Kind = "type-renamed"           // compatible: another type name, identical layout
	FlexElem      Kind = "flexible-array-element" // compatible: offset, struct size and alignment kept
	PointerTarget Kind = "pointer-target"         // compatible: a pointer to an undescribed type now points to another
	UnionWrap     Kind = "union-wrap"             // compatible: int x -> union { int x; int y; }
	AddedOpaque   Kind = "added-in-opaque"        // compatible: a member inside an old opaque range
	AddedPadding  Kind = "added-in-padding"       // compatible: a member in bytes no old member held
	Undescribed   Kind = "undescribed"            // informational: a member's bytes now opaque
)

// TKind is a type's shape.
type TKind int

// Type shapes. Other is anything the grading compares by name only (a
// float, a mutex, a vector).
const (
	TOther TKind = iota
	TScalar
	TVoid
	TPointer
	TArray
	TStruct // with a layout the side describes (Struct non-nil) or not
	TFunc
)

// Type is a member's type as grading sees it.
type Type struct {
	Kind TKind
	// Canon is the spelling compared for equality: spec names for structs
	// and enums, i32/u32 for int/unsigned, no qualifiers ("u8[16]",
	// "enc_comm*").
	Canon string
	// Display is how the side spells the type for a reader (the spec's
	// grammar, or C as the DWARF has it); Canon when empty.
	Display     string
	Size, Align int64
	Elem        *Type
	Len         int64 // arrays: -1 for a flexible array member
	// Struct reads the layout of a TStruct the side describes; nil when it
	// is undescribed (an opaque type, a declaration).
	Struct func() (*Layout, error)
}

// Show is the type as its side spells it.
func (t *Type) Show() string {
	if t == nil {
		return ""
	}
	if t.Display != "" {
		return t.Display
	}
	return t.Canon
}

// Undescribed reports whether a pointee says nothing about the bytes it
// points to: void, a function, an opaque or undescribed struct.
func (t *Type) Undescribed() bool {
	return t == nil || t.Kind == TVoid || t.Kind == TFunc || t.Kind == TStruct && t.Struct == nil || t.Kind == TOther && t.Canon == ""
}

// Member is one member of a layout.
type Member struct {
	Name               string
	Offset, Size       int64
	BitOffset, BitSize int64 // bitfields only: from the struct's start
	Type               *Type
	// Group holds the named members of an anonymous struct or union member
	// (Name ""), at their offsets in the enclosing layout.
	Group []Member
	// Filler is a generated header's stand-in for an opaque range.
	Filler bool
}

// End is one past the member's last byte.
func (m *Member) End() int64 {
	if m.BitSize > 0 {
		return (m.BitOffset + m.BitSize + 7) / 8
	}
	return m.Offset + m.Size
}

func (m *Member) start() int64 {
	if m.BitSize > 0 {
		return m.BitOffset / 8
	}
	return m.Offset
}

// Range is an opaque byte range; Covers names the members it stands for
// (written by nrtabi extract: a bitfield's name, "<anonymous@80>" for an
// anonymous union).
type Range struct {
	Off, End int64
	Covers   []string
}

// Layout is one side's struct.
type Layout struct {
	Name        string // the name findings are reported under
	Key         string // identity of this layout on its side (same key, same layout)
	Size, Align int64
	Prefix      bool // only a prefix is modelled
	Packed      bool
	Members     []Member
	Opaque      []Range
}

func (l *Layout) opaqueHolding(off, end int64) *Range {
	for i := range l.Opaque {
		if r := &l.Opaque[i]; off >= r.Off && end <= r.End {
			return r
		}
	}
	return nil
}
