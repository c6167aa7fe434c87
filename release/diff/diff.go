// Package diff compares two specs of the boundary — two releases, a
// release and a directory, or a release and what its binaries show — and
// classifies every change by how it affects a pairing of libnrt and libnccom.
// It reads specs only, never a binary: a side given as binaries is made a
// spec by package release (Observe, then New) before it gets here.
//
// The command and its classes of change: docs/nrtabi-diff.md.
package diff

import (
	"fmt"

	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/spec"
)

// Severity of a change for the boundary.
type Severity string

// The three severities. Incompatible: a libnrt and a libnccom built for the
// two sides no longer load or agree. Compatible: the boundary still holds
// (a rename, a field found inside an opaque range, a new version node).
// Informational: nothing a binary observes (addresses, log text, identity).
const (
	Incompatible  Severity = "incompatible"
	Compatible    Severity = "compatible"
	Informational Severity = "informational"
)

// Exit bits, in the style of abidiff (shared with nrtabi check).
const (
	ExitCompatible   = 4
	ExitIncompatible = 8
)

// Change kinds.
const (
	ForwardAdded       = "forward-added"
	ForwardRemoved     = "forward-removed"
	ForwardRenamed     = "forward-renamed"
	ForwardMoved       = "forward-moved"
	ForwardSignature   = "forward-signature"
	ForwardGuard       = "forward-guard"
	ForwardAddress     = "forward-address"
	ReverseAdded       = "reverse-added"
	ReverseRemoved     = "reverse-removed"
	ReverseReversioned = "reverse-reversioned"
	ReverseSignature   = "reverse-signature"
	ReverseShape       = "reverse-shape"
	ReverseAddress     = "reverse-address"
	NodeAdded          = "version-node-added"
	NodeRemoved        = "version-node-removed"
	NodeChanged        = "version-node-changed"
	CompatID           = "compat-id"
	StructAdded        = "struct-added"
	StructRemoved      = "struct-removed"
	StructDescribed    = "struct-described" // an old opaque type the new side lays out
	StructSize         = "struct-size"
	FieldMoved         = "field-moved"
	FieldResized       = "field-resized"
	FieldRetyped       = "field-retyped"
	FieldRenamed       = "field-renamed"
	FieldTypeRenamed   = "field-type-renamed" // its type has a new name and an identical layout
	FieldFlexElem      = "field-flexible-array-element"
	FieldAdded         = "field-added"
	FieldAddedOpaque   = "field-added-in-opaque"
	FieldRemoved       = "field-removed"
	FieldUndescribed   = "field-undescribed"
	FieldBitfield      = "field-bitfield"         // now a bitfield, or overlapped by another member
	FieldLaidOver      = "field-laid-over"        // an unknown member over an old field's bytes
	FieldPointerTarget = "field-pointer-target"   // a pointer to an undescribed type now points to another
	FieldUnionWrap     = "field-union-wrap"       // its bytes now exactly an anonymous member's
	FieldAddedPadding  = "field-added-in-padding" // in bytes no old field held
	StructOpaqueBounds = "struct-opaque-bounds"   // an old opaque range runs past the struct
	ConstantChanged    = "constant-changed"
	ConstantAdded      = "constant-added"
	ConstantRemoved    = "constant-removed"
	MessageChanged     = "message-changed"
	MessageAdded       = "message-added"
	MessageRemoved     = "message-removed"
	TableChanged       = "slot-table-changed"
)

// Change is one classified difference: one fact, once.
type Change struct {
	Kind     string   `json:"kind"`
	Severity Severity `json:"severity"`
	Group    string   `json:"group"`   // forward, reverse, versions, compatibility, net, structs, constants, messages
	Subject  string   `json:"subject"` // symbol, struct or struct.field, constant ("struct.a .. z" for a run of moved fields)
	Old      string   `json:"old,omitempty"`
	New      string   `json:"new,omitempty"`
	Detail   string   `json:"detail,omitempty"`
	// Struct layouts (package grade's facts): the rule's own name, the
	// numbers as numbers, the fields of a moved run and their delta, where
	// the struct is embedded, and what the change forces elsewhere (not
	// counted as changes of their own).
	Grade        string   `json:"grade,omitempty"`
	OldOffset    *int64   `json:"old_offset,omitempty"`
	NewOffset    *int64   `json:"new_offset,omitempty"`
	OldSize      *int64   `json:"old_size,omitempty"`
	NewSize      *int64   `json:"new_size,omitempty"`
	Fields       []string `json:"fields,omitempty"`
	Delta        int64    `json:"delta,omitempty"`
	EmbeddedIn   []string `json:"embedded_in,omitempty"`
	Consequences []Change `json:"consequences,omitempty"`
	// Waived: a waiver accepted the change (waive.go, docs/waivers.md): it
	// is reported, counts for nothing, and SARIF carries it as a
	// suppression (docs/sarif.md#waivers).
	Waived *render.Waiver `json:"waived,omitempty"`
}

// Walk calls fn on c and each consequence under it, depth first.
func (c Change) Walk(fn func(Change, int)) { c.walk(fn, 0) }

func (c Change) walk(fn func(Change, int), depth int) {
	fn(c, depth)
	for _, x := range c.Consequences {
		x.walk(fn, depth+1)
	}
}

// Side names one side of a diff.
type Side struct {
	Name     string `json:"name"`
	Source   string `json:"source"` // release, directory or binaries
	Libnrt   string `json:"libnrt_build_id,omitempty"`
	Libnccom string `json:"libnccom_build_id,omitempty"`
	Libnet   string `json:"libnccom_net_build_id,omitempty"`
}

// Schema is the JSON schema id of a diff report (docs/nrtabi-diff.md):
// members are only added within one id.
const Schema = "nrtabi.diff/1"

// Report is the result of a diff.
type Report struct {
	Schema  string   `json:"schema"`
	Old     Side     `json:"old"`
	New     Side     `json:"new"`
	Changes []Change `json:"changes"` // each fact once; the summary counts these
	Summary Summary  `json:"summary"`
	Verbose bool     `json:"-"` // WriteText lists every field of a moved run
	// Quoted: the report is printed inside another command (release new),
	// whose exit status is its own, so the verdict names no exit status.
	Quoted bool `json:"-"`
	// The two sides, for the spec rows SARIF locates changes at.
	oldSpec, newSpec *spec.Spec
}

// Summary counts changes by severity.
type Summary struct {
	Incompatible  int `json:"incompatible"`
	Compatible    int `json:"compatible"`
	Informational int `json:"informational"`
	Waived        int `json:"waived"` // changes a waiver accepted, in none of the counts above
	Exit          int `json:"exit"`
}

// Diff compares two specs.
func Diff(old, new *spec.Spec) Report {
	d := &differ{old: old, new: new, oldNames: old.Lookup(), newNames: new.Lookup()}
	d.compat()
	d.forward()
	d.reverse()
	d.nodes()
	d.structs()
	d.enums()
	d.foldEnumCauses()
	d.constants()
	d.messages()
	d.net()
	d.regroupNet()
	r := Report{Schema: Schema, Old: side(old), New: side(new), Changes: d.changes, oldSpec: old, newSpec: new}
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	r.count()
	if diffedHook != nil {
		diffedHook(r) // tests: its SARIF form (sarif.go)
	}
	return r
}

// count sets the summary from the changes no waiver accepted.
func (r *Report) count() {
	r.Summary = Summary{}
	for _, c := range r.Changes {
		if c.Waived != nil {
			r.Summary.Waived++
			continue
		}
		sev := c.Severity
		c.Walk(func(x Change, _ int) {
			if x.Severity == Incompatible || x.Severity == Compatible && sev != Incompatible {
				sev = x.Severity
			}
		})
		switch sev {
		case Incompatible:
			r.Summary.Incompatible++
			r.Summary.Exit |= ExitIncompatible
		case Compatible:
			r.Summary.Compatible++
			r.Summary.Exit |= ExitCompatible
		default:
			r.Summary.Informational++
		}
	}
}

// side names a spec: its release name, else (a struct fragment) its
// directory.
func side(s *spec.Spec) Side {
	name := s.Release.Name
	if name == "" {
		name = s.Dir
	}
	// A build-id carried from a parent names the parent's binary.
	return Side{Name: name, Source: s.Dir, Libnrt: s.Release.LibNRT.OwnBuildID(), Libnccom: s.Release.LibNCCOM.OwnBuildID(),
		Libnet: s.Release.LibNCCOMNet.OwnBuildID()}
}

type differ struct {
	old, new *spec.Spec
	// oldNames, newNames: each side's names, looked up for every struct
	// and enum of the other (spec.Lookup).
	oldNames, newNames spec.Lookup
	changes            []Change
}

func (d *differ) add(group, kind string, sev Severity, subject, old, new, detail string) {
	d.changes = append(d.changes, Change{Kind: kind, Severity: sev, Group: group, Subject: subject, Old: old, New: new, Detail: detail})
}

func (d *differ) compat() {
	o, n := d.old.ConstantByName("NCCOM_COMPAT_ID"), d.new.ConstantByName("NCCOM_COMPAT_ID")
	if o == nil || n == nil {
		return
	}
	if ov, nv := fmt.Sprint(o.Value), fmt.Sprint(n.Value); ov != nv {
		d.add("compatibility", CompatID, Incompatible, "NCCOM_COMPAT_ID", ov, nv,
			"libnrt's ncclInit rejects a libnccom that reports another id")
	}
}

// identity reports whether a constant describes a build, not the boundary.
// A switch, not a map: a package-level map is built by the package's init,
// which every command runs (docs/benchmarks.md#start-up-2026-12-04).
func identity(name string) bool {
	switch name {
	case "NCCOM_VERSION_STRING", "NCCOM_VERSION_BANNER", "NCCOM_NCCL_VERSION",
		"NCCOM_COMPAT_ID": // reported as compat-id
		return true
	}
	return false
}

func (d *differ) constants() {
	for _, o := range d.old.Constants {
		n := d.new.ConstantByName(o.Name)
		switch {
		case n == nil:
			d.add("constants", ConstantRemoved, Informational, o.Name, fmt.Sprint(o.Value), "", "no longer in the spec")
		case fmt.Sprint(o.Value) != fmt.Sprint(n.Value) && o.Name != "NCCOM_COMPAT_ID":
			sev := Incompatible
			if identity(o.Name) {
				sev = Informational
			}
			d.add("constants", ConstantChanged, sev, o.Name, fmt.Sprint(o.Value), fmt.Sprint(n.Value), "")
		}
	}
	for _, n := range d.new.Constants {
		if d.old.ConstantByName(n.Name) == nil {
			d.add("constants", ConstantAdded, Informational, n.Name, "", fmt.Sprint(n.Value), "")
		}
	}
}

func (d *differ) messages() {
	for _, o := range d.old.Messages {
		n := d.new.MessageByID(o.ID)
		switch {
		case n == nil:
			d.add("messages", MessageRemoved, Informational, o.ID, o.Text, "", "")
		case n.Text != o.Text:
			d.add("messages", MessageChanged, Informational, o.ID, o.Text, n.Text, "log text only")
		}
	}
	for _, n := range d.new.Messages {
		if d.old.MessageByID(n.ID) == nil {
			d.add("messages", MessageAdded, Informational, n.ID, "", n.Text, "")
		}
	}
}

func (d *differ) nodes() {
	for _, o := range d.old.VersionNodes {
		n := d.new.VersionNodeByName(o.Name)
		switch {
		case n == nil:
			d.add("versions", NodeRemoved, Incompatible, o.Name, describeNode(o), "", "libnccom's versioned imports bound to it no longer resolve")
		case n.Index != o.Index || n.Parent != o.Parent || n.Base != o.Base:
			d.add("versions", NodeChanged, Incompatible, o.Name, describeNode(o), describeNode(*n), "")
		}
	}
	for _, n := range d.new.VersionNodes {
		if d.old.VersionNodeByName(n.Name) == nil {
			d.add("versions", NodeAdded, Compatible, n.Name, "", describeNode(n), "a new node keeps the old ones")
		}
	}
}

func describeNode(n spec.VersionNode) string {
	s := fmt.Sprintf("index %d", n.Index)
	if n.Base {
		s += ", BASE"
	}
	if n.Parent != "" {
		s += ", parent " + n.Parent
	}
	return s
}
