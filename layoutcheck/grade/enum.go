package grade

import (
	"fmt"

	"github.com/nrtabi/nrtabi/spec"
)

// EnumSide is one side of an enum comparison: a spec row, or what a
// binary's DWARF shows of the enum a spec row names.
type EnumSide struct {
	Name   string // the spec name (the DWARF side is found by it)
	Size   int64  // the underlying size in bytes; 0 when not known
	Values []EnumValue
	// Partial: the side lists only some enumerators (a spec row's
	// partial = true): what it does not list is not a change.
	Partial bool
}

// EnumValue is one enumerator, in declaration order. An alias is an
// enumerator whose value an earlier one has (spec rows state it with
// alias_of, which validation holds to this).
type EnumValue struct {
	Name  string
	Value int64
}

// EnumSeverity grades an enum change, with the words of check's and
// diff's severities.
type EnumSeverity string

// The grades of an enum change.
const (
	EnumIncompatible EnumSeverity = "incompatible"
	EnumCompatible   EnumSeverity = "compatible"
)

// The kinds of enum change (docs/nrtabi-diff.md#enums,
// docs/nrtabi-check.md#enums).
const (
	EnumKindAdded        = "enum-added"         // the enum is new
	EnumKindRemoved      = "enum-removed"       // the enum is gone
	EnumKindSize         = "enum-size"          // its underlying size changed
	EnumKindValueAdded   = "enumerator-added"   // a new name (and maybe a new value)
	EnumKindValueRemoved = "enumerator-removed" // a name is gone
	EnumKindRenamed      = "enumerator-renamed" // same value, a new name
	EnumKindShifted      = "enumerator-shifted" // same name, a new value
	EnumKindAlias        = "enumerator-alias"   // same name and value, aliasing another enumerator than before
)

// EnumChange is one graded difference between two sides of an enum. A run
// of enumerators shifted by one delta is one change (EnumFold): Name is its
// first, Run every one.
type EnumChange struct {
	Kind     string
	Severity EnumSeverity
	Enum     string
	Name     string   // the enumerator; "" for a change of the enum itself
	Run      []string // a folded run of shifted enumerators, Name first
	Old, New string   // values, names or sizes as text; "" where a side has none
	Delta    int64    // a shift's new value minus its old
	Value    string   // a rename's value (Old and New are the names)
}

// Message is the change as one line, the same words in check and diff.
func (c EnumChange) Message() string {
	switch c.Kind {
	case EnumKindAdded:
		return fmt.Sprintf("enum %s added", c.Enum)
	case EnumKindRemoved:
		return fmt.Sprintf("enum %s removed", c.Enum)
	case EnumKindSize:
		return fmt.Sprintf("enum %s: underlying size %s -> %s bytes", c.Enum, c.Old, c.New)
	case EnumKindValueAdded:
		return fmt.Sprintf("%s.%s = %s added", c.Enum, c.Name, c.New)
	case EnumKindValueRemoved:
		return fmt.Sprintf("%s.%s = %s removed", c.Enum, c.Name, c.Old)
	case EnumKindRenamed:
		return fmt.Sprintf("%s.%s renamed %s (value %s)", c.Enum, c.Old, c.New, c.Value)
	case EnumKindShifted:
		if len(c.Run) > 1 {
			return fmt.Sprintf("%s: %d enumerators shifted by %+d, %s..%s (%s: %s -> %s)", c.Enum, len(c.Run), c.Delta, c.Run[0], c.Run[len(c.Run)-1], c.Name, c.Old, c.New)
		}
		return fmt.Sprintf("%s.%s shifted %s -> %s", c.Enum, c.Name, c.Old, c.New)
	case EnumKindAlias:
		return fmt.Sprintf("%s.%s: %s -> %s", c.Enum, c.Name, c.Old, c.New)
	}
	return c.Enum + ": " + c.Kind
}

// EnumFromSpec is the side a spec row gives.
func EnumFromSpec(e *spec.Enum) *EnumSide {
	if e == nil {
		return nil
	}
	s := &EnumSide{Name: e.Name, Size: int64(e.Size), Partial: e.Partial}
	for _, v := range e.Values {
		s.Values = append(s.Values, EnumValue{v.Name, v.Value})
	}
	return s
}

// EnumGrade is the one grading of an enum's change, for check (spec
// against DWARF) and diff (spec against spec). old or new is nil when the
// enum is absent from that side. crosses says the enum is used across the
// boundary (spec.Spec.EnumCrosses on either side): then a value that a name
// no longer has, a value gone, and a size change are incompatible, since a
// side built against old reads or writes values new means otherwise.
// Names are source, not binary: an added enumerator, a rename, an alias
// moved, and a removed name whose value another name keeps are compatible,
// as is every change of an enum no boundary type uses.
//
// Each fact is one change: an enumerator is matched by name first, then an
// unmatched old one by value (a rename); an alias change that only follows
// a rename of its target is not repeated. The changes come in the old
// side's declaration order, then the new side's additions.
func EnumGrade(old, new *EnumSide, crosses bool) []EnumChange {
	bin := EnumCompatible
	if crosses {
		bin = EnumIncompatible
	}
	switch {
	case old == nil && new == nil:
		return nil
	case old == nil:
		return []EnumChange{{Kind: EnumKindAdded, Severity: EnumCompatible, Enum: new.Name}}
	case new == nil:
		return []EnumChange{{Kind: EnumKindRemoved, Severity: bin, Enum: old.Name}}
	}
	var out []EnumChange
	if old.Size > 0 && new.Size > 0 && old.Size != new.Size {
		out = append(out, EnumChange{Kind: EnumKindSize, Severity: bin, Enum: old.Name, Old: fmt.Sprint(old.Size), New: fmt.Sprint(new.Size)})
	}
	newByName := map[string]int{}
	newByValue := map[int64][]int{} // in declaration order; a rename takes the first free one
	for i, v := range new.Values {
		if _, ok := newByName[v.Name]; !ok {
			newByName[v.Name] = i
		}
		newByValue[v.Value] = append(newByValue[v.Value], i)
	}
	oldByName := map[string]bool{}
	for _, v := range old.Values {
		oldByName[v.Name] = true
	}
	claimed := map[int]bool{}      // new enumerators matched by a rename
	renamed := map[string]string{} // old name -> new name
	for _, o := range old.Values {
		if i, ok := newByName[o.Name]; ok {
			claimed[i] = true
			if n := new.Values[i]; n.Value != o.Value {
				out = append(out, EnumChange{Kind: EnumKindShifted, Severity: bin, Enum: old.Name, Name: o.Name,
					Old: fmt.Sprint(o.Value), New: fmt.Sprint(n.Value), Delta: n.Value - o.Value})
			}
			continue
		}
		to := -1
		for _, i := range newByValue[o.Value] {
			if !claimed[i] && !oldByName[new.Values[i].Name] {
				to = i
				break
			}
		}
		if to >= 0 {
			claimed[to] = true
			renamed[o.Name] = new.Values[to].Name
			out = append(out, EnumChange{Kind: EnumKindRenamed, Severity: EnumCompatible, Enum: old.Name, Name: o.Name,
				Old: o.Name, New: new.Values[to].Name, Value: fmt.Sprint(o.Value)})
			continue
		}
		if new.Partial {
			continue // not listed is not removed
		}
		sev := bin
		if len(newByValue[o.Value]) > 0 {
			sev = EnumCompatible // the value stays, under another name
		}
		out = append(out, EnumChange{Kind: EnumKindValueRemoved, Severity: sev, Enum: old.Name, Name: o.Name, Old: fmt.Sprint(o.Value)})
	}
	// Alias moves: a name kept with its value, now the alias of another
	// enumerator (or of none), beyond what a rename of its target explains.
	oldAlias, newAlias := aliases(old.Values), aliases(new.Values)
	for _, o := range old.Values {
		i, ok := newByName[o.Name]
		if !ok || new.Values[i].Value != o.Value {
			continue
		}
		was, is := oldAlias[o.Name], newAlias[o.Name]
		if r, ok := renamed[was]; ok {
			was = r
		}
		if was != is {
			out = append(out, EnumChange{Kind: EnumKindAlias, Severity: EnumCompatible, Enum: old.Name, Name: o.Name,
				Old: aliasWords(was), New: aliasWords(is)})
		}
	}
	for i, n := range new.Values {
		if !claimed[i] && !oldByName[n.Name] && !old.Partial {
			out = append(out, EnumChange{Kind: EnumKindValueAdded, Severity: EnumCompatible, Enum: old.Name, Name: n.Name, New: fmt.Sprint(n.Value)})
		}
	}
	return out
}

func aliasWords(of string) string {
	if of == "" {
		return "a value of its own"
	}
	return "alias of " + of
}

// aliases maps each alias to the first enumerator with its value (a name
// declared twice keeps its first declaration).
func aliases(vs []EnumValue) map[string]string {
	first := map[int64]string{}
	out := map[string]string{}
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		if f, ok := first[v.Value]; ok {
			out[v.Name] = f
		} else {
			first[v.Value] = v.Name
		}
	}
	return out
}

// EnumFold makes each run of enumerators shifted by one delta, adjacent in
// the change list, one change (one fact, one line: a value inserted in the
// middle of an enum shifts every later one). Other changes pass unchanged.
func EnumFold(cs []EnumChange) []EnumChange {
	var out []EnumChange
	for _, c := range cs {
		if n := len(out); n > 0 && c.Kind == EnumKindShifted {
			last := &out[n-1]
			if last.Kind == EnumKindShifted && last.Enum == c.Enum && last.Delta == c.Delta && last.Severity == c.Severity {
				if last.Run == nil {
					last.Run = []string{last.Name}
				}
				last.Run = append(last.Run, c.Name)
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// EnumNames is every enumerator a change covers: the run, or its one name.
func (c EnumChange) EnumNames() []string {
	if len(c.Run) > 0 {
		return c.Run
	}
	if c.Name == "" {
		return nil
	}
	return []string{c.Name}
}
