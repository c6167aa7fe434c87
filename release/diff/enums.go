package diff

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
)

// The enum change kinds: those of the one enum grading, which check uses
// too (docs/nrtabi-diff.md#enums).
const (
	EnumAdded        = grade.EnumKindAdded
	EnumRemoved      = grade.EnumKindRemoved
	EnumSize         = grade.EnumKindSize
	EnumValueAdded   = grade.EnumKindValueAdded
	EnumValueRemoved = grade.EnumKindValueRemoved
	EnumRenamed      = grade.EnumKindRenamed
	EnumShifted      = grade.EnumKindShifted
	EnumAlias        = grade.EnumKindAlias
)

// enums grades every enum of either side with grade.EnumGrade: an enum is
// across the boundary when either side's struct fields or prototypes use it.
func (d *differ) enums() {
	oldCross, newCross := d.old.Crossing(), d.new.Crossing()
	for i := range d.old.Enums {
		o := &d.old.Enums[i]
		n := d.newNames.Enum(o.Name)
		crosses := oldCross.Crosses(o) || (n != nil && newCross.Crosses(n))
		d.enumChanges(grade.EnumGrade(grade.EnumFromSpec(o), grade.EnumFromSpec(n), crosses))
	}
	for i := range d.new.Enums {
		n := &d.new.Enums[i]
		if d.oldNames.Enum(n.Name) == nil {
			d.enumChanges(grade.EnumGrade(nil, grade.EnumFromSpec(n), newCross.Crosses(n)))
		}
	}
}

// enumChanges adds graded enum changes, each run of shifts as one.
func (d *differ) enumChanges(cs []grade.EnumChange) {
	for _, c := range grade.EnumFold(cs) {
		d.changes = append(d.changes, enumChange(c))
	}
}

// enumChange is the diff form of a graded enum change: the subject is
// enum.enumerator (the enum alone for a change of the enum itself), old and
// new the values (the names of a rename, the sizes of a size change).
func enumChange(c grade.EnumChange) Change {
	ch := Change{Kind: c.Kind, Grade: c.Kind, Severity: Severity(c.Severity), Group: "constants", Subject: c.Enum, Old: c.Old, New: c.New}
	if c.Name != "" {
		ch.Subject = c.Enum + "." + c.Name
	}
	switch c.Kind {
	case grade.EnumKindRenamed:
		ch.Detail = "value " + c.Value
	case grade.EnumKindShifted:
		if len(c.Run) > 1 {
			ch.Detail = fmt.Sprintf("%d enumerators shifted by %+d", len(c.Run), c.Delta)
			ch.Subject = c.Enum + "." + c.Run[0] + ".." + c.Run[len(c.Run)-1]
		}
	case grade.EnumKindAlias:
		ch.Detail = "alias"
	case grade.EnumKindSize:
		ch.Detail = "underlying size in bytes"
	}
	ch.Detail = strings.TrimSpace(ch.Detail)
	return ch
}

// foldEnumCauses puts a struct field's resize or move that follows from
// its enum's size change under that change, as check does
// (grade.EnumSizeCause): one fact, its consequences under it.
func (d *differ) foldEnumCauses() {
	at := map[string]int{} // enum name -> index of its size change
	names := map[string]bool{}
	for i, c := range d.changes {
		if c.Kind == EnumSize {
			at[c.Subject], names[c.Subject] = i, true
		}
	}
	if len(at) == 0 {
		return
	}
	causes := map[int][]Change{}
	folded := map[int]bool{}
	for i, c := range d.changes {
		if c.Group != "structs" || len(c.Fields) > 1 {
			continue
		}
		st, field, _ := strings.Cut(c.Subject, ".")
		if n := grade.EnumSizeCause(d.old.StructByName(st), field, grade.Kind(c.Grade), names); n != "" {
			causes[at[n]] = append(causes[at[n]], c)
			folded[i] = true
		}
	}
	out := make([]Change, 0, len(d.changes)-len(folded))
	for i, c := range d.changes {
		if folded[i] {
			continue
		}
		c.Consequences = append(c.Consequences, causes[i]...)
		out = append(out, c)
	}
	d.changes = out
}
