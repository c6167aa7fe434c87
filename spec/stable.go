package spec

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Stable field names (docs/spec-format.md#stable-field-names): a field row of
// a derived release may say was = "old_name", its name in the parent. The
// chain of was rows back to the release where the field first appears gives
// its stable name, the one hand-written code uses in every release, and its
// stable type, the type that name had there. The loader computes both while
// it lays each release over its parent, because only then are the parent's
// rows at hand.

// rootStable starts every field's chain in a release that derives from
// nothing: its names and types are the stable ones, and a was row has no
// parent to name.
func rootStable(s *Spec) Errors {
	var errs Errors
	for _, st := range s.Structs {
		for j := range st.Fields {
			f := &st.Fields[j]
			if f.Was != "" {
				errs = append(errs, &Error{Pos: s.PosOf(&f.Fact, "was"), Rule: "was",
					Msg: fmt.Sprintf("%s.%s: was = %q, but release %s derives from no release; was names the field in the derived_from release, so drop it here", st.Name, f.Name, f.Was, s.Release.Name)})
			}
			f.Stable, f.StableType, f.StableFrom = f.Name, f.Type, s.Release.Name
		}
	}
	return errs
}

// deriveStable carries stable names from parent (already resolved down its
// own chain) into the structs child restates. Rows child inherits unchanged
// keep theirs. A field continues a parent field of its struct named by its was
// row, else the parent field of its own name; otherwise it is new and starts
// a chain of its own.
func deriveStable(parent, child *Spec) Errors {
	var errs Errors
	byName := map[string]*Struct{}
	for _, st := range parent.Structs {
		byName[st.Name] = st
	}
	for _, st := range child.Structs {
		pst := byName[st.Name]
		for j := range st.Fields {
			f := &st.Fields[j]
			var pf *Field
			if pst != nil {
				pf = fieldNamed(pst, f.Name)
			}
			if f.Was != "" {
				switch {
				case pst == nil:
					errs = append(errs, &Error{Pos: child.PosOf(&f.Fact, "was"), Rule: "was",
						Msg: fmt.Sprintf("%s.%s: was = %q, but release %s has no struct %s; was names a field of the same struct in the derived_from release", st.Name, f.Name, f.Was, parent.Release.Name, st.Name)})
					pf = nil
				case fieldNamed(pst, f.Was) == nil:
					errs = append(errs, &Error{Pos: child.PosOf(&f.Fact, "was"), Rule: "was",
						Msg: fmt.Sprintf("%s.%s: was = %q, but %s's %s has no field %s (its fields: %s); name the field as release %s spells it", st.Name, f.Name, f.Was, parent.Release.Name, st.Name, f.Was, fieldNames(pst), parent.Release.Name)})
					pf = nil
				default:
					pf = fieldNamed(pst, f.Was)
				}
			}
			if pf != nil {
				f.Stable, f.StableType, f.StableFrom = pf.StableName(), pf.StableTypeName(), pf.StableFrom
			} else {
				f.Stable, f.StableType, f.StableFrom = f.Name, f.Type, child.Release.Name
			}
		}
		errs = append(errs, uniqueStable(child, st)...)
	}
	return errs
}

// uniqueStable holds a restated struct to one field per stable name, and to
// names that do not collide across spellings: the C header declares both the
// release's name and the stable one (gen/cheader.go), so a field's stable
// name may not be another field's name.
func uniqueStable(s *Spec, st *Struct) Errors {
	var errs Errors
	claimed := map[string]string{} // stable name -> field
	named := map[string]bool{}
	for _, f := range st.Fields {
		named[f.Name] = true
	}
	for j := range st.Fields {
		f := &st.Fields[j]
		key := "name"
		if f.Was != "" {
			key = "was"
		}
		if other, ok := claimed[f.Stable]; ok {
			errs = append(errs, &Error{Pos: s.PosOf(&f.Fact, key), Rule: "was",
				Msg: fmt.Sprintf("%s.%s and %s.%s both continue the field %s; only one field can keep a stable name, so drop or correct one was row", st.Name, other, st.Name, f.Name, f.Stable)})
			continue
		}
		claimed[f.Stable] = f.Name
		if f.Stable != f.Name && named[f.Stable] {
			errs = append(errs, &Error{Pos: s.PosOf(&f.Fact, key), Rule: "was",
				Msg: fmt.Sprintf("%s.%s keeps the stable name %s, which another field of %s now has; give that field a was row or rename it", st.Name, f.Name, f.Stable, st.Name)})
		}
	}
	return errs
}

// ContinuedField is the field of parent that f continues: the one its was
// row names, else the one of its own name; nil when there is none.
func ContinuedField(parent *Struct, f *Field) *Field {
	if f.Was != "" {
		return fieldNamed(parent, f.Was)
	}
	return fieldNamed(parent, f.Name)
}

func fieldNamed(st *Struct, name string) *Field {
	for j := range st.Fields {
		if st.Fields[j].Name == name {
			return &st.Fields[j]
		}
	}
	return nil
}

func fieldNames(st *Struct) string {
	names := make([]string, 0, len(st.Fields))
	for _, f := range st.Fields {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	if len(names) > 12 {
		names = append(names[:12], "...")
	}
	return strings.Join(names, ", ")
}

// IntDomain is the set of values an integer-like type holds, [lo, hi]:
// integers by size and sign, 4-byte enums as C's int, bool as 0..1, char as
// signed (x86-64). ok is false for every other kind.
func (t *Type) IntDomain() (lo int64, hi uint64, ok bool) {
	if t == nil {
		return 0, 0, false
	}
	var size int
	var signed bool
	switch t.Kind {
	case KindInt:
		size, signed = t.Size(), t.Signed
	case KindEnum:
		size, signed = 4, true
		if t.Enum != nil && t.Enum.Size != 4 { // a packed or wide enum holds its underlying type's values
			size, signed = t.Enum.Size, t.Enum.Signed()
		}
	case KindChar:
		size, signed = 1, true
	case KindBool:
		return 0, 1, true
	default:
		return 0, 0, false
	}
	if size <= 0 || size > 8 {
		return 0, 0, false
	}
	bits := uint(8 * size)
	if signed {
		return -1 << (bits - 1), 1<<(bits-1) - 1, true
	}
	if bits == 64 {
		return 0, ^uint64(0), true
	}
	return 0, 1<<bits - 1, true
}

// DomainFits reports whether every value of [lo, hi] is a value of t.
func (t *Type) DomainFits(lo int64, hi uint64) bool {
	tlo, thi, ok := t.IntDomain()
	return ok && lo >= tlo && hi <= thi
}

// RangeFits reports whether every value of a declared range [lo, hi]
// (lo <= hi) is a value of t.
func (t *Type) RangeFits(lo, hi int64) bool {
	tlo, thi, ok := t.IntDomain()
	if !ok || lo < tlo || lo > hi {
		return false
	}
	if hi < 0 {
		return true // lo <= hi < 0 and lo >= tlo
	}
	return uint64(hi) <= thi
}

// fieldRanges holds each range row to a well-formed domain its field's type
// can hold: [lo, hi], lo <= hi, on an integer, enum, bool or char field.
func (c *checker) fieldRanges(st *Struct) {
	for j := range st.Fields {
		f := &st.Fields[j]
		if f.Range == nil || f.T == nil {
			continue
		}
		if len(f.Range) != 2 || f.Range[0] > f.Range[1] {
			c.at(&f.Fact, "range", "range", "%s.%s: range = %v is not [lo, hi] with lo <= hi; write the field's value domain as two integers", st.Name, f.Name, f.Range)
			continue
		}
		if _, _, ok := f.T.IntDomain(); !ok {
			c.at(&f.Fact, "range", "range", "%s.%s: range on a %s field; a value domain applies only to integer, enum, bool and char fields, so drop it", st.Name, f.Name, f.Type)
			continue
		}
		if lo, hi := f.Range[0], f.Range[1]; !f.T.RangeFits(lo, hi) {
			c.at(&f.Fact, "range", "range", "%s.%s: range = [%d, %d] holds values its type %s cannot; narrow the range or correct the type", st.Name, f.Name, lo, hi, f.Type)
		}
	}
}

// InferWas gives a was row to each field of st that a rename of parent's
// same struct explains: no field of parent has its name, and parent's field
// at its offset has a name no field of st has. It is for tools that restate
// a struct from binaries or headers (nrtabi release new), which see the new
// spelling but not the history; the row is marked INFERRED with a note, so
// the guess is visible and a wrong one is one line to correct. It returns
// the fields it marked, as "new (was old)".
func InferWas(parent, st *Struct) []string {
	if parent == nil || st == nil {
		return nil
	}
	have := map[string]bool{}
	for _, f := range st.Fields {
		have[f.Name] = true
	}
	var out []string
	for j := range st.Fields {
		f := &st.Fields[j]
		if f.Was != "" || fieldNamed(parent, f.Name) != nil {
			continue
		}
		var match *Field
		for k := range parent.Fields {
			pf := &parent.Fields[k]
			if pf.Offset == f.Offset && !have[pf.Name] {
				if match != nil { // two candidates at one offset: no guess
					match = nil
					break
				}
				match = pf
			}
		}
		if match == nil {
			continue
		}
		f.Was = match.Name
		if f.ConfFields == nil {
			f.ConfFields = map[string]string{}
		} else {
			f.ConfFields = maps.Clone(f.ConfFields)
		}
		f.ConfFields["was"] = string(Inferred)
		note := fmt.Sprintf("was %s: the parent's field at offset %d, whose name this struct no longer has", match.Name, f.Offset)
		if f.Note != "" {
			note = f.Note + "; " + note
		}
		f.Note = note
		out = append(out, fmt.Sprintf("%s (was %s)", f.Name, match.Name))
	}
	return out
}

// CarryRanges gives each field of st that continues a field of parent (by
// its was row or its name) and has no range of its own the parent field's
// range, where the field's type holds it: a value domain is a fact about
// the program, which headers and binaries do not show. The key is listed in
// the row's carried keys. It returns the fields it changed.
func CarryRanges(parent, st *Struct) []string {
	if parent == nil || st == nil {
		return nil
	}
	var out []string
	for j := range st.Fields {
		f := &st.Fields[j]
		if f.Range != nil {
			continue
		}
		pf := ContinuedField(parent, f)
		if pf == nil || len(pf.Range) != 2 {
			continue
		}
		t, err := ParseType(f.Type)
		if err != nil {
			continue
		}
		if t.Kind == KindStruct { // a named type: an enum is C's int
			t = &Type{Kind: KindEnum}
		}
		if !t.RangeFits(pf.Range[0], pf.Range[1]) {
			continue
		}
		f.Range = slices.Clone(pf.Range)
		if !slices.Contains(f.Carried, "range") {
			f.Carried = append(slices.Clone(f.Carried), "range")
		}
		out = append(out, f.Name)
	}
	return out
}
