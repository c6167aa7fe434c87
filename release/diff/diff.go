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
	ConstantChanged    = "constant-changed"
	ConstantAdded      = "constant-added"
	ConstantRemoved    = "constant-removed"
	MessageChanged     = "message-changed"
	MessageAdded       = "message-added"
	MessageRemoved     = "message-removed"
	TableChanged       = "slot-table-changed"
)

// Change is one classified difference.
type Change struct {
	Kind     string   `json:"kind"`
	Severity Severity `json:"severity"`
	Group    string   `json:"group"`   // forward, reverse, versions, compatibility, structs, constants, messages
	Subject  string   `json:"subject"` // symbol, struct or struct.field, constant
	Old      string   `json:"old,omitempty"`
	New      string   `json:"new,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

// Side names one side of a diff.
type Side struct {
	Name     string `json:"name"`
	Source   string `json:"source"` // release, directory or binaries
	Libnrt   string `json:"libnrt_build_id,omitempty"`
	Libnccom string `json:"libnccom_build_id,omitempty"`
}

// Report is the result of a diff.
type Report struct {
	Old     Side        `json:"old"`
	New     Side        `json:"new"`
	Changes []Change    `json:"changes"`
	Moves   []MoveGroup `json:"moved_groups"` // runs of field-moved changes with one delta, each also in changes
	Summary Summary     `json:"summary"`
	Verbose bool        `json:"-"` // WriteText lists every change of a run
}

// Summary counts changes by severity.
type Summary struct {
	Incompatible  int `json:"incompatible"`
	Compatible    int `json:"compatible"`
	Informational int `json:"informational"`
	Exit          int `json:"exit"`
}

// Diff compares two specs.
func Diff(old, new *spec.Spec) Report {
	d := &differ{old: old, new: new}
	d.compat()
	d.forward()
	d.reverse()
	d.nodes()
	d.structs()
	d.enums()
	d.constants()
	d.messages()
	r := Report{Old: side(old), New: side(new), Changes: d.changes, Moves: groupMoves(d.changes, new)}
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	if r.Moves == nil {
		r.Moves = []MoveGroup{}
	}
	for _, c := range r.Changes {
		switch c.Severity {
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
	return r
}

// side names a spec: its release name, else (a struct fragment) its
// directory.
func side(s *spec.Spec) Side {
	name := s.Release.Name
	if name == "" {
		name = s.Dir
	}
	// A build-id carried from a parent names the parent's binary.
	return Side{Name: name, Source: s.Dir, Libnrt: s.Release.LibNRT.OwnBuildID(), Libnccom: s.Release.LibNCCOM.OwnBuildID()}
}

type differ struct {
	old, new *spec.Spec
	changes  []Change
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

// identity constants describe a build, not the boundary.
var identity = map[string]bool{
	"NCCOM_VERSION_STRING": true, "NCCOM_VERSION_BANNER": true, "NCCOM_NCCL_VERSION": true,
	"NCCOM_COMPAT_ID": true, // reported as compat-id
}

func (d *differ) constants() {
	for _, o := range d.old.Constants {
		n := d.new.ConstantByName(o.Name)
		switch {
		case n == nil:
			d.add("constants", ConstantRemoved, Informational, o.Name, fmt.Sprint(o.Value), "", "no longer in the spec")
		case fmt.Sprint(o.Value) != fmt.Sprint(n.Value) && o.Name != "NCCOM_COMPAT_ID":
			sev := Incompatible
			if identity[o.Name] {
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
