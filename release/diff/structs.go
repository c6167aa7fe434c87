package diff

import (
	"fmt"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
	"github.com/nrtabi/nrtabi/spec"
)

// diffKinds are package grade's rules under diff's names (the rules and
// their severities are grade's, shared with nrtabi check:
// docs/layoutcheck.md#one-grading).
var diffKinds = map[grade.Kind]string{
	grade.Size: StructSize, grade.Moved: FieldMoved, grade.Resized: FieldResized, grade.Retyped: FieldRetyped,
	grade.Bitfield: FieldBitfield, grade.Removed: FieldRemoved, grade.LaidOver: FieldLaidOver, grade.Added: FieldAdded,
	grade.OpaqueBounds: StructOpaqueBounds, grade.Renamed: FieldRenamed, grade.TypeRenamed: FieldTypeRenamed,
	grade.FlexElem: FieldFlexElem, grade.PointerTarget: FieldPointerTarget, grade.UnionWrap: FieldUnionWrap,
	grade.AddedOpaque: FieldAddedOpaque, grade.AddedPadding: FieldAddedPadding, grade.Undescribed: FieldUndescribed,
}

var severities = map[grade.Severity]Severity{grade.Info: Informational, grade.Compatible: Compatible, grade.Incompatible: Incompatible}

func (d *differ) structs() {
	g := grade.New()
	for _, o := range d.old.Structs {
		n := d.new.StructByName(o.Name)
		if n == nil {
			d.add("structs", StructRemoved, Informational, o.Name, fmt.Sprintf("%d bytes", o.Size), "", "no longer described")
			continue
		}
		lo, ln := grade.FromSpec(o, "old"), grade.FromSpec(n, "new")
		pairCovered(lo, ln) // anonymous members by position (anonymous.go)
		g.Grade(lo, ln)
	}
	for _, f := range g.Facts() {
		d.changes = append(d.changes, fromGrade(f))
	}
	for _, n := range d.new.Structs {
		if d.old.StructByName(n.Name) == nil {
			// A type the old side knew only by name (an opaque type, used
			// behind pointers) that the new one lays out: a fact gained,
			// compatible, never a clash of two rows of one name
			// (docs/nrtabi-diff.md#now-described).
			if o := opaqueNamed(d.old, n); o != nil {
				d.add("structs", StructDescribed, Compatible, n.Name, "opaque", fmt.Sprintf("%d bytes", n.Size), "now described: the old side's opaque type "+o.Name+" is laid out")
				continue
			}
			d.add("structs", StructAdded, Informational, n.Name, "", fmt.Sprintf("%d bytes", n.Size), "newly described")
		}
	}
}

// opaqueNamed is s's opaque type that st describes: by name, or by tag.
func opaqueNamed(s *spec.Spec, st *spec.Struct) *spec.OpaqueType {
	for i, o := range s.OpaqueTypes {
		if o.Name == st.Name || o.CTag() == st.CTag() {
			return &s.OpaqueTypes[i]
		}
	}
	return nil
}

func num(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// fromGrade words a grade finding as a change.
func fromGrade(f *grade.Finding) Change {
	c := Change{Kind: diffKinds[f.Kind], Severity: severities[f.Severity], Group: "structs", Subject: f.Path(),
		Old: f.Old, New: f.New, Detail: f.Detail, Grade: string(f.Kind),
		OldOffset: num(f.OldOffset), NewOffset: num(f.NewOffset), OldSize: num(f.OldSize), NewSize: num(f.NewSize),
		Fields: f.Fields, Delta: f.Delta, EmbeddedIn: f.EmbeddedIn}
	for _, x := range f.Consequences {
		c.Consequences = append(c.Consequences, fromGrade(x))
	}
	return c
}

func field(st *spec.Struct, name string) *spec.Field {
	for i := range st.Fields {
		if st.Fields[i].Name == name {
			return &st.Fields[i]
		}
	}
	return nil
}
