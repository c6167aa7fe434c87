package diff

import (
	"fmt"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
	"github.com/nrtabi/nrtabi/spec"
)

// diffKind is package grade's rule under diff's name (the rules and their
// severities are grade's, shared with nrtabi check:
// docs/layoutcheck.md#one-grading), "" for a rule diff does not name. A
// switch, not a map: a package-level map is built by the package's init,
// which every command runs (docs/benchmarks.md#start-up-2026-12-04).
func diffKind(k grade.Kind) string {
	switch k {
	case grade.Size:
		return StructSize
	case grade.Moved:
		return FieldMoved
	case grade.Resized:
		return FieldResized
	case grade.Retyped:
		return FieldRetyped
	case grade.Bitfield:
		return FieldBitfield
	case grade.Removed:
		return FieldRemoved
	case grade.LaidOver:
		return FieldLaidOver
	case grade.Added:
		return FieldAdded
	case grade.OpaqueBounds:
		return StructOpaqueBounds
	case grade.Renamed:
		return FieldRenamed
	case grade.TypeRenamed:
		return FieldTypeRenamed
	case grade.FlexElem:
		return FieldFlexElem
	case grade.PointerTarget:
		return FieldPointerTarget
	case grade.UnionWrap:
		return FieldUnionWrap
	case grade.AddedOpaque:
		return FieldAddedOpaque
	case grade.AddedPadding:
		return FieldAddedPadding
	case grade.Undescribed:
		return FieldUndescribed
	}
	return ""
}

// severity is grade's severity under diff's name, "" for one it has none for.
func severity(s grade.Severity) Severity {
	switch s {
	case grade.Info:
		return Informational
	case grade.Compatible:
		return Compatible
	case grade.Incompatible:
		return Incompatible
	}
	return ""
}

func (d *differ) structs() {
	g := grade.New()
	for _, o := range d.old.Structs {
		n := d.newNames.Struct(o.Name)
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
		if d.oldNames.Struct(n.Name) == nil {
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
	c := Change{Kind: diffKind(f.Kind), Severity: severity(f.Severity), Group: "structs", Subject: f.Path(),
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
