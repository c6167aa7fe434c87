package diff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

func (d *differ) structs() {
	for _, o := range d.old.Structs {
		n := d.new.StructByName(o.Name)
		if n == nil {
			d.add("structs", StructRemoved, Informational, o.Name, fmt.Sprintf("%d bytes", o.Size), "", "no longer described")
			continue
		}
		d.structPair(o, n)
	}
	for _, n := range d.new.Structs {
		if d.old.StructByName(n.Name) == nil {
			d.add("structs", StructAdded, Informational, n.Name, "", fmt.Sprintf("%d bytes", n.Size), "newly described")
		}
	}
}

func field(st *spec.Struct, name string) *spec.Field {
	for i := range st.Fields {
		if st.Fields[i].Name == name {
			return &st.Fields[i]
		}
	}
	return nil
}

func insideOpaque(st *spec.Struct, off, size int) bool {
	return st.OpaqueHolding(int64(off), int64(off)+int64(size)) != nil
}

// structPair reports one struct's changes: its size first, then its fields
// in offset order.
func (d *differ) structPair(o, n *spec.Struct) {
	before := len(d.changes)
	defer func() {
		fields := d.changes[before:]
		sort.SliceStable(fields, func(i, j int) bool { return fieldOrder(n, o, fields[i]) < fieldOrder(n, o, fields[j]) })
	}()
	if o.Size != n.Size {
		sev := Incompatible
		detail := ""
		if o.Prefix && n.Prefix {
			sev, detail = Informational, "only a prefix is modelled"
		}
		d.add("structs", StructSize, sev, o.Name, fmt.Sprint(o.Size), fmt.Sprint(n.Size), detail)
	}
	// Pair fields by name; the unpaired ones may be renames.
	var gone, fresh []*spec.Field
	for i := range o.Fields {
		of := &o.Fields[i]
		nf := field(n, of.Name)
		if nf == nil {
			gone = append(gone, of)
			continue
		}
		subj := o.Name + "." + of.Name
		if of.Offset != nf.Offset {
			d.add("structs", FieldMoved, Incompatible, subj, fmt.Sprint(of.Offset), fmt.Sprint(nf.Offset), "")
		}
		switch {
		case of.T.Size() != nf.T.Size():
			d.add("structs", FieldResized, Incompatible, subj, fmt.Sprintf("%s (%d B)", of.Type, of.T.Size()), fmt.Sprintf("%s (%d B)", nf.Type, nf.T.Size()), "")
		case canon(of.T) != canon(nf.T):
			if kind, detail := gradedRetype(o, n, of, nf); kind != "" {
				d.add("structs", kind, Compatible, subj, of.Type, nf.Type, detail)
				break
			}
			d.add("structs", FieldRetyped, Incompatible, subj, of.Type, nf.Type, "")
		}
	}
	for i := range n.Fields {
		if field(o, n.Fields[i].Name) == nil {
			fresh = append(fresh, &n.Fields[i])
		}
	}
	for _, of := range gone {
		renamed := false
		for j, nf := range fresh {
			if nf != nil && nf.Offset == of.Offset && canon(nf.T) == canon(of.T) {
				d.add("structs", FieldRenamed, Compatible, o.Name+"."+of.Name, of.Name, nf.Name, fmt.Sprintf("same %s at %d", nf.Type, nf.Offset))
				fresh[j], renamed = nil, true
				break
			}
		}
		if renamed {
			continue
		}
		if insideOpaque(n, of.Offset, of.T.Size()) {
			d.add("structs", FieldUndescribed, Informational, o.Name+"."+of.Name, fmt.Sprintf("%s @%d", of.Type, of.Offset), "opaque", "the bytes are kept, no longer described")
		} else {
			d.add("structs", FieldRemoved, Incompatible, o.Name+"."+of.Name, fmt.Sprintf("%s @%d", of.Type, of.Offset), "", "")
		}
	}
	for _, nf := range fresh {
		if nf == nil {
			continue
		}
		subj := o.Name + "." + nf.Name
		what := fmt.Sprintf("%s @%d", nf.Type, nf.Offset)
		switch {
		case insideOpaque(o, nf.Offset, nf.T.Size()):
			d.add("structs", FieldAddedOpaque, Compatible, subj, "opaque", what, "found inside a range the old spec left opaque")
		case o.Prefix && nf.Offset >= o.Size:
			d.add("structs", FieldAddedOpaque, Compatible, subj, "", what, "beyond the old modelled prefix")
		default:
			d.add("structs", FieldAdded, Incompatible, subj, "", what, "")
		}
	}
}

// fieldOrder sorts a struct's changes: the size first, then by the field's
// offset in the new layout (the old one for removed fields).
func fieldOrder(n, o *spec.Struct, c Change) int {
	if c.Kind == StructSize {
		return -1
	}
	name := c.Subject[strings.IndexByte(c.Subject, '.')+1:]
	if f := field(n, name); f != nil {
		return f.Offset
	}
	if c.Kind == FieldRenamed {
		if f := field(n, c.New); f != nil {
			return f.Offset
		}
	}
	if f := field(o, name); f != nil {
		return f.Offset
	}
	return 1 << 30
}

// canon spells a type for comparison: structs and enums by their spec name
// (not the alias a side happened to use), int as i32 and unsigned as u32,
// and without const/volatile, which do not change a layout.
func canon(t *spec.Type) string {
	switch t.Kind {
	case spec.KindPointer:
		return canon(t.Elem) + "*"
	case spec.KindArray:
		if t.Len < 0 {
			return canon(t.Elem) + "[]"
		}
		return fmt.Sprintf("%s[%d]", canon(t.Elem), t.Len)
	case spec.KindVector:
		return "std::vector<" + canon(t.Elem) + ">"
	case spec.KindStruct:
		if t.Struct != nil {
			return t.Struct.Name
		}
	case spec.KindEnum:
		if t.Enum != nil {
			return t.Enum.Name
		}
	}
	switch t.Name {
	case "int":
		return "i32"
	case "unsigned":
		return "u32"
	}
	return t.Name
}
