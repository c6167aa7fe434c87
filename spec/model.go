package spec

import (
	"fmt"
	"strings"
)

// Conf is the confidence of a fact, from most to least sure
// (docs/spec-format.md#provenance-and-confidence): HIGH is byte-anchored in
// the binary, MED is named from debug info or partly traced, LOW is what a
// source document states but grades LOW itself (seen, not traced), INFERRED
// is the spec's own reading where no document states the fact.
type Conf string

// The four confidence levels, most sure first.
const (
	High     Conf = "HIGH"
	Med      Conf = "MED"
	Low      Conf = "LOW"
	Inferred Conf = "INFERRED"
)

// ConfLevels are the levels in order, most sure first.
var ConfLevels = []Conf{High, Med, Low, Inferred}

// ConfChoices is the levels as an error message lists them.
const ConfChoices = "HIGH, MED, LOW or INFERRED"

// Valid reports whether c is one of the four levels.
func (c Conf) Valid() bool { return c == High || c == Med || c == Low || c == Inferred }

// Rank is the level's place in ConfLevels (0 is HIGH, the most sure), -1 for
// no level: a smaller rank is a surer fact.
func (c Conf) Rank() int {
	for i, l := range ConfLevels {
		if c == l {
			return i
		}
	}
	return -1
}

// Pos is a position in a spec file.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Fact carries the provenance every spec row has.
type Fact struct {
	Conf       Conf              `toml:"conf" json:"conf"`
	Source     string            `toml:"source" json:"source"`
	Note       string            `toml:"note" json:"note,omitempty"`
	ConfFields map[string]string `toml:"conf_fields" json:"conf_fields,omitempty"` // per-key confidence overrides
	// Carried lists the keys of a row that `release new` restated from the
	// parent release because its inputs could not show them; empty with
	// CarriedFrom set, the whole row is the parent's.
	Carried []string `toml:"carried" json:"carried,omitempty"`
	// CarriedFrom names the release (the derived_from parent) whose facts
	// the carried keys, or the whole row, restate unobserved, at that
	// release's confidence (docs/spec-format.md#provenance-and-confidence).
	CarriedFrom string `toml:"carried_from" json:"carried_from,omitempty"`
	Pos         Pos    `toml:"-" json:"-"`
	Path        string `toml:"-" json:"-"` // key path in the file, e.g. forward[3]
}

// IsCarried reports whether key of the row is a parent release's fact the
// release did not observe: the whole row is carried, or the key is listed.
func (f *Fact) IsCarried(key string) bool {
	if f.CarriedFrom == "" {
		return false
	}
	if len(f.Carried) == 0 {
		return true
	}
	for _, k := range f.Carried {
		if k == key {
			return true
		}
	}
	return false
}

// OwnGit is the library's git hash when it is the release's own, "" when
// the release does not know it or carries its parent's (a libnrt built for
// a header-only release must not report the parent's hash:
// docs/spec-format.md#provenance-and-confidence).
func (l *Library) OwnGit() string {
	if l.IsCarried("git") {
		return ""
	}
	return l.Git
}

// OwnBuildID is the library's build-id when the release observed it, ""
// when it does not know it or carries its parent's.
func (l *Library) OwnBuildID() string {
	if l.IsCarried("build_id") {
		return ""
	}
	return l.BuildID
}

// ConfOf is the confidence of one key of the row.
func (f *Fact) ConfOf(key string) Conf {
	if c, ok := f.ConfFields[key]; ok {
		return Conf(c)
	}
	return f.Conf
}

// Spec is one release of the libnrt ↔ libnccom boundary, or a struct
// fragment (IsFragment). Its tables are the kinds of kinds.go.
type Spec struct {
	Release        Release
	Counts         Counts
	SlotTable      SlotTable
	VersionNodes   []VersionNode
	Forward        []Forward
	Reverse        []Reverse
	Constants      []Constant
	Enums          []Enum
	OpaqueTypes    []OpaqueType
	Messages       []Message
	Structs        []*Struct
	Contradictions []Contradiction
	Extensions     []Extension
	LinkBehaviours []LinkBehaviour

	Dir   string   // where it was read from: "spec/<release>" for an embedded release, else the directory as given
	Files []string // the files, in load order

	index     map[string]*filePositions // per file; nil for a release built outside the loader
	removals  []removal                 // [remove] tables of a derived release, applied by derive
	ancestors []string                  // the derived_from chain, parent first: what carried_from may name
}

// Release identifies the shipped binaries the spec describes.
type Release struct {
	Name        string `toml:"name"`
	DerivedFrom string `toml:"derived_from"`
	// RuntimeVersion is the version libnrt reports (nrt_get_version's
	// rt_major.rt_minor.rt_patch[.rt_maintenance]) and CollectivesVersion
	// libnccom's; they differ in real releases, and neither is ever read
	// from Name (docs/spec-format.md#release-identity). Empty: the release
	// does not know it. A derived release does not inherit them.
	RuntimeVersion     string `toml:"runtime_version"`
	CollectivesVersion string `toml:"collectives_version"`
	// CarriedOver names the parent rows ("struct enc_context", "constant X")
	// that a release made from binaries inherits unconfirmed.
	CarriedOver []string `toml:"carried_over"`
	LibNRT      Library  `toml:"libnrt"`
	LibNCCOM    Library  `toml:"libnccom"`
	LibNCCOMNet Library  `toml:"libnccom_net"`
	// Headers records how a release made from a header tree compiled it
	// (docs/spec-format.md#header-provenance); the zero value for a release
	// made otherwise. A derived release never inherits its parent's.
	Headers Headers `toml:"headers"`
	Fact
}

// Headers is the compile provenance of a release made from vendor headers
// (`nrtabi release new --headers`): the tree as given, the C standard
// headers prepended to every unit (a vendor header may rely on them without
// including them), the files force-included before it (--include), the
// include directories (-I), any other compiler flags, and the order the
// tree's headers were compiled in when it matters. Each is recorded as used,
// so the release can be made again the same way.
type Headers struct {
	Tree        string   `toml:"tree" json:"tree"`
	Prelude     []string `toml:"prelude" json:"prelude,omitempty"`
	Include     []string `toml:"include" json:"include,omitempty"`
	IncludeDirs []string `toml:"include_dirs" json:"include_dirs,omitempty"`
	CFlags      []string `toml:"cflags" json:"cflags,omitempty"`
	Order       []string `toml:"order" json:"order,omitempty"`
	Fact
}

// Written reports whether the release records header provenance: a
// [release.headers] table read from a file, or one naming a tree.
func (h Headers) Written() bool { return h.Pos.File != "" || h.Tree != "" }

// libraries are the release's library tables, by key, in file order.
func (r *Release) libraries() []struct {
	key string
	lib *Library
} {
	return []struct {
		key string
		lib *Library
	}{{"libnrt", &r.LibNRT}, {"libnccom", &r.LibNCCOM}, {"libnccom_net", &r.LibNCCOMNet}}
}

// Library is one shipped ELF file.
type Library struct {
	Package      string        `toml:"package" json:"package,omitempty"`
	File         string        `toml:"file" json:"file,omitempty"`
	SONAME       string        `toml:"soname" json:"soname,omitempty"`
	BuildID      string        `toml:"build_id" json:"build_id,omitempty"`
	Git          string        `toml:"git" json:"git,omitempty"`
	DWARF        string        `toml:"dwarf" json:"dwarf,omitempty"`
	Needed       []string      `toml:"needed" json:"needed,omitempty"`
	VersionNeeds []VersionNeed `toml:"version_need" json:"version_needs,omitempty"`
	Objects      []DataObject  `toml:"object" json:"objects,omitempty"`
	Fact
}

// VersionNeed is one .gnu.version_r requirement.
type VersionNeed struct {
	File    string `toml:"file" json:"file"`
	Version string `toml:"version" json:"version"`
	Index   int    `toml:"index" json:"index"`
}

// DataObject is an exported data symbol (the net plugin tables).
type DataObject struct {
	Name  string `toml:"name" json:"name"`
	Addr  uint64 `toml:"addr" json:"addr"`
	Slots int    `toml:"slots" json:"slots"`
	Bound bool   `toml:"bound" json:"bound,omitempty"`
}

// Counts are the declared sizes of the boundary; the validator holds the rows to them.
type Counts struct {
	Forward    int `toml:"forward"`
	ReverseNEC int `toml:"reverse_nec"`
	ReverseNRT int `toml:"reverse_nrt"`
	Fact
}

// SlotTable is libnrt's .bss table of dlsym'd forward pointers.
type SlotTable struct {
	Base          uint64 `toml:"base"`
	Top           uint64 `toml:"top"`
	Stride        uint64 `toml:"stride"`
	Order         string `toml:"order"` // "descending": dlsym index i lives at top - i*stride
	Sentinel      string `toml:"sentinel"`
	SentinelAddr  uint64 `toml:"sentinel_addr"`
	NetHandleAddr uint64 `toml:"net_handle_addr"`
	Library       string `toml:"library"`     // dlopen name
	NetLibrary    string `toml:"net_library"` // soft-loaded plugin
	NetProbe      string `toml:"net_probe"`   // libfabric symbol probed when the plugin is absent
	Fact
}

// VersionNode is one ELF version definition of libnrt.
type VersionNode struct {
	Name   string `toml:"name"`
	Index  int    `toml:"index"`
	Base   bool   `toml:"base"`
	Parent string `toml:"parent"`
	Binds  string `toml:"binds"` // what the node carries, in words
	Fact
}

// Param is one parameter of a C signature.
type Param struct {
	Name string `toml:"name" json:"name"`
	Type string `toml:"type" json:"type"`
	Note string `toml:"note" json:"note,omitempty"`
	T    *Type  `toml:"-" json:"-"`
}

// Signature is a structured C function signature.
type Signature struct {
	Returns string  `toml:"returns" json:"returns"`
	Params  []Param `toml:"params" json:"params"`
	Ret     *Type   `toml:"-" json:"-"`
}

// C renders the signature as a C prototype for name.
func (s Signature) C(name string) string {
	var b strings.Builder
	b.WriteString(s.Returns)
	if !strings.HasSuffix(s.Returns, "*") {
		b.WriteByte(' ')
	}
	b.WriteString(name)
	b.WriteByte('(')
	for i, p := range s.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Type + " " + p.Name)
	}
	if len(s.Params) == 0 {
		b.WriteString("void")
	}
	b.WriteByte(')')
	return b.String()
}

// Guard kinds of a forward trampoline.
const (
	Guarded = "guarded" // reads the init-error sentinel first
	Probe   = "probe"   // ncclGetVersionInfo: zero-fill, call if non-NULL, else NRT_FAILURE
	Hot     = "hot"     // ncclNetworkProxyProgress: calls the slot with no guard
)

// Forward is one neuron* dlsym target and its nccl* trampoline.
type Forward struct {
	Index          int    `toml:"index"`
	Name           string `toml:"name"`
	NCCOMAddr      uint64 `toml:"nccom_addr"`
	Slot           uint64 `toml:"slot"`
	Trampoline     string `toml:"trampoline"`
	TrampolineAddr uint64 `toml:"trampoline_addr"`
	Group          string `toml:"group"`
	Guard          string `toml:"guard"`
	Signature
	Fact
}

// Reverse shapes.
const (
	ShapeInline    = "inline"
	ShapeThunk     = "thunk"
	ShapeAdapter   = "adapter"
	ShapeReentrant = "re-entrant"
	ShapeQuery     = "query"
)

// Reverse is one callback libnccom imports from libnrt.
type Reverse struct {
	Name       string   `toml:"name"`
	Version    string   `toml:"version"`
	Addr       uint64   `toml:"addr"`
	Group      string   `toml:"group"`
	Shape      string   `toml:"shape"`
	Target     string   `toml:"target"`      // internal libnrt callee, if any
	TargetArgs []string `toml:"target_args"` // adapter: the callee's arguments, as callback parameter names
	Reenters   []string `toml:"reenters"`    // re-entrant: runtime queries it calls
	Signature
	Fact
}

// Constant is a named value of the boundary.
type Constant struct {
	Name  string `toml:"name"`
	Type  string `toml:"type"` // u32, u64, int, size_t, string
	Value any    `toml:"value"`
	Fact
}

// Int is the constant's integer value.
func (c Constant) Int() (int64, bool) {
	v, ok := c.Value.(int64)
	return v, ok
}

// Str is the constant's string value.
func (c Constant) Str() (string, bool) {
	v, ok := c.Value.(string)
	return v, ok
}

// Enum is a C enum with a fixed size: 4 for a plain enum, 1 or 2 for a
// packed one or one with a narrow underlying type, 8 when a value needs it
// (docs/spec-format.md#enums).
type Enum struct {
	Name   string      `toml:"name"`
	Tag    string      `toml:"tag"`
	Size   int         `toml:"size"`
	Values []EnumValue `toml:"values"`
	Status bool        `toml:"status"` // the NRT_STATUS code set
	// Partial: the row lists only the enumerators the documents name, not
	// every one the binary has; a binary's other enumerators are then not
	// changes (docs/spec-format.md#enums).
	Partial bool `toml:"partial"`
	Fact
}

// EnumValue is one enumerator. AliasOf states an intended alias: the name
// of an earlier enumerator of the same enum with the same value, so that a
// duplicate value without it is refused as an accident.
type EnumValue struct {
	Name    string `toml:"name" json:"name"`
	Value   int64  `toml:"value" json:"value"`
	AliasOf string `toml:"alias_of" json:"alias_of,omitempty"`
	Conf    Conf   `toml:"conf" json:"conf,omitempty"`
	Note    string `toml:"note" json:"note,omitempty"`
}

// OpaqueType is a type known only by name, used behind pointers.
type OpaqueType struct {
	Name string `toml:"name"`
	Tag  string `toml:"tag"`
	Fact
}

// CTag is the C struct tag of the opaque type.
func (o OpaqueType) CTag() string {
	if o.Tag != "" {
		return o.Tag
	}
	return strings.TrimSuffix(o.Name, "_t")
}

// Message is an exact log or error string of the shipped binaries.
type Message struct {
	ID    string   `toml:"id"`
	Where string   `toml:"where"`
	Text  string   `toml:"text"`
	Args  []string `toml:"args"`
	Fact
}

// Struct is a C struct layout. Fields and opaque ranges are sorted by offset.
type Struct struct {
	Name     string   `toml:"name"`
	Tag      string   `toml:"tag"`
	Aliases  []string `toml:"aliases"`
	Size     int      `toml:"size"`
	MinAlign int      `toml:"align"`  // a floor under the members' alignment (an all-opaque struct has no member to imply one)
	Prefix   bool     `toml:"prefix"` // only a prefix of a larger object is modelled
	Packed   bool     `toml:"packed"` // a byte image (wire or hash input), no padding, alignment 1
	Side     string   `toml:"side"`   // libnrt, libnccom, both, wire
	Fields   []Field  `toml:"field"`
	Opaque   []Opaque `toml:"opaque"`
	// Absent lists fields the hand-written runtime knows that this
	// release's struct does not have (docs/spec-format.md#absent-fields):
	// a fact about the vendor's layout, never a field of it.
	Absent []AbsentField `toml:"absent"`
	Fact
}

// AbsentField is a field the runtime names by its stable name that the
// release lacks: the struct is laid out without it, and the generated
// mirror answers its presence accessors with false
// (docs/generator.md#absent-fields). Type is the type the runtime expects
// where the field is present; the accessors have it in every release.
type AbsentField struct {
	Name string `toml:"name"`
	Type string `toml:"type"`
	T    *Type  `toml:"-"`
	Fact
}

// AbsentByName is the struct's absent row for a stable field name, or nil.
func (s *Struct) AbsentByName(name string) *AbsentField {
	for i := range s.Absent {
		if s.Absent[i].Name == name {
			return &s.Absent[i]
		}
	}
	return nil
}

// Field is one known member of a struct.
type Field struct {
	Name   string `toml:"name"`
	Offset int    `toml:"offset"`
	Type   string `toml:"type"`
	Size   int    `toml:"size"` // optional; must agree with the type
	// Was is the field's name in the release this one derives from, when
	// the release renamed it (docs/spec-format.md#stable-field-names).
	Was string `toml:"was"`
	// Range is the field's value domain [lo, hi], where the spec promises
	// one: it makes a narrowing or sign-changing re-type lossless.
	Range []int64 `toml:"range"`
	T     *Type   `toml:"-"`
	// Stable, StableType and StableFrom are set by the loader: the field's
	// name, type and release where its chain of was rows begins. Hand-written
	// code names the field by Stable in every release.
	Stable     string `toml:"-"`
	StableType string `toml:"-"`
	StableFrom string `toml:"-"`
	Fact
}

// StableName is the name hand-written code uses for the field in every
// release: Stable once the loader has set it, else Name.
func (f *Field) StableName() string {
	if f.Stable != "" {
		return f.Stable
	}
	return f.Name
}

// StableTypeName is the field's type where its stable name began (its own
// type when the loader has not set one).
func (f *Field) StableTypeName() string {
	if f.StableType != "" {
		return f.StableType
	}
	return f.Type
}

// Opaque is a byte range whose contents are not described.
type Opaque struct {
	Offset int      `toml:"offset"`
	Size   int      `toml:"size"`
	Covers []string `toml:"covers"` // members of the real object the range stands for (written by nrtabi extract)
	Fact
}

// End is one past the last byte.
func (o Opaque) End() int { return o.Offset + o.Size }

// End is one past the last byte of the field.
func (f Field) End() int { return f.Offset + f.T.Size() }

// CTag is the C struct tag.
func (s *Struct) CTag() string {
	if s.Tag != "" {
		return s.Tag
	}
	return strings.TrimSuffix(s.Name, "_t")
}

// Typedefs are the typedef names declared for the struct.
func (s *Struct) Typedefs() []string {
	var out []string
	if strings.HasSuffix(s.Name, "_t") {
		out = append(out, s.Name)
	}
	return append(out, s.Aliases...)
}

// Align is the struct's alignment: the largest member alignment, at least MinAlign.
func (s *Struct) Align() int {
	if s.Packed {
		return 1
	}
	a := max(s.MinAlign, 1)
	for _, f := range s.Fields {
		if f.T != nil {
			a = max(a, f.T.Align())
		}
	}
	return a
}

// Member is a field or an opaque range, in offset order.
type Member struct {
	Field  *Field
	Opaque *Opaque
}

// Offset of the member.
func (m Member) Offset() int {
	if m.Field != nil {
		return m.Field.Offset
	}
	return m.Opaque.Offset
}

// Members interleaves fields and opaque ranges by offset.
func (s *Struct) Members() []Member {
	out := make([]Member, 0, len(s.Fields)+len(s.Opaque))
	s.EachMember(func(m Member) { out = append(out, m) })
	return out
}

// EachMember calls f on each member in Members' order, without the list.
func (s *Struct) EachMember(f func(Member)) {
	i, j := 0, 0
	for i < len(s.Fields) || j < len(s.Opaque) {
		if j >= len(s.Opaque) || i < len(s.Fields) && s.Fields[i].Offset <= s.Opaque[j].Offset {
			f(Member{Field: &s.Fields[i]})
			i++
		} else {
			f(Member{Opaque: &s.Opaque[j]})
			j++
		}
	}
}

// Contradiction records where the source documents disagree and what the spec chose.
type Contradiction struct {
	ID     string   `toml:"id"`
	Topic  string   `toml:"topic"`
	Claims []string `toml:"claims"`
	Chosen string   `toml:"chosen"`
	Fact
}

// Extension records behaviour the project has beyond (or instead of) what
// the source documents describe: a check the seed does not make, a value
// it leaves untraced and the runtime has to make up. Its id shares one
// namespace with the contradictions (docs/spec-format.md#extensions).
type Extension struct {
	ID     string `toml:"id" json:"id"`
	Topic  string `toml:"topic" json:"topic"`
	Seed   string `toml:"seed" json:"seed"`     // what the source document does, with its section
	Ours   string `toml:"ours" json:"ours"`     // what the project does instead or besides
	Reason string `toml:"reason" json:"reason"` // why
	Fact
}

// LinkBehaviour is an observed dynamic-linker outcome for a libnrt variant.
type LinkBehaviour struct {
	Variant string `toml:"variant"`
	LibNRT  string `toml:"libnrt"`
	Outcome string `toml:"outcome"` // loads | error | abort
	Message string `toml:"message"`
	Glibc   string `toml:"glibc"`
	Fact
}

// StructByName finds a struct by name, tag or alias.
func (s *Spec) StructByName(name string) *Struct {
	for _, st := range s.Structs {
		// The typedefs are the name itself (when it ends in _t) and the
		// aliases; read in place, a lookup allocates nothing.
		if st.Name == name || st.CTag() == name {
			return st
		}
		for _, a := range st.Aliases {
			if a == name {
				return st
			}
		}
	}
	return nil
}

// EnumByName finds an enum by name or tag.
func (s *Spec) EnumByName(name string) *Enum {
	return find(s.Enums, func(e *Enum) bool { return e.Name == name || e.Tag == name })
}

// OpaqueTypeByName finds an opaque type by name or tag.
func (s *Spec) OpaqueTypeByName(name string) *OpaqueType {
	return find(s.OpaqueTypes, func(o *OpaqueType) bool { return o.Name == name || o.Tag == name })
}

// ForwardByName finds a forward row by neuron* or nccl* name.
func (s *Spec) ForwardByName(name string) *Forward {
	return find(s.Forward, func(f *Forward) bool { return f.Name == name || f.Trampoline == name })
}

// ReverseByName finds a reverse row.
func (s *Spec) ReverseByName(name string) *Reverse {
	return find(s.Reverse, func(r *Reverse) bool { return r.Name == name })
}

// ConstantByName finds a constant by name.
func (s *Spec) ConstantByName(name string) *Constant {
	return find(s.Constants, func(c *Constant) bool { return c.Name == name })
}

// ContradictionByID finds a contradiction by id.
func (s *Spec) ContradictionByID(id string) *Contradiction {
	return find(s.Contradictions, func(c *Contradiction) bool { return c.ID == id })
}

// ExtensionByID finds an extension by id.
func (s *Spec) ExtensionByID(id string) *Extension {
	return find(s.Extensions, func(e *Extension) bool { return e.ID == id })
}

// MessageByID finds a message by id.
func (s *Spec) MessageByID(id string) *Message {
	return find(s.Messages, func(m *Message) bool { return m.ID == id })
}

// VersionNodeByName finds a version node.
func (s *Spec) VersionNodeByName(name string) *VersionNode {
	return find(s.VersionNodes, func(n *VersionNode) bool { return n.Name == name })
}

// find is the first row that matches, in place.
func find[T any](rows []T, match func(*T) bool) *T {
	for i := range rows {
		if match(&rows[i]) {
			return &rows[i]
		}
	}
	return nil
}

// ByIndex returns the forward rows in dlsym order.
func (s *Spec) ByIndex() []*Forward {
	out := make([]*Forward, len(s.Forward))
	for i := range s.Forward {
		f := &s.Forward[i]
		if f.Index >= 0 && f.Index < len(out) && out[f.Index] == nil {
			out[f.Index] = f
		}
	}
	return out
}

// BySlot returns the forward rows in ascending slot address order (memory order).
func (s *Spec) BySlot() []*Forward {
	out := make([]*Forward, len(s.Forward))
	for i := range s.Forward {
		out[i] = &s.Forward[i]
	}
	sortBy(out, func(f *Forward) uint64 { return f.Slot })
	return out
}
