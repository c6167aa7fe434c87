package spec

import "fmt"

// resolve parses every type expression and binds named references to their
// struct, enum or opaque declaration.
func (s *Spec) resolve() Errors {
	var errs Errors
	names := s.Lookup()
	typeOf := func(f *Fact, key, expr string, needComplete bool) *Type {
		if expr == "" {
			errs = append(errs, &Error{Pos: s.PosOf(f, key), Rule: "required", Msg: fmt.Sprintf("%s: %s is required", f.Path, key)})
			return nil
		}
		t, err := ParseType(expr)
		if err != nil {
			errs = append(errs, &Error{Pos: s.PosOf(f, key), Rule: "type", Msg: err.Error()})
			return nil
		}
		ok := true
		var walk func(*Type, bool)
		walk = func(t *Type, behindPtr bool) {
			switch t.Kind {
			case KindPointer:
				walk(t.Elem, true)
				return
			case KindArray, KindVector:
				walk(t.Elem, behindPtr || t.Kind == KindVector)
				return
			case KindVoid:
				if !behindPtr && needComplete {
					errs = append(errs, &Error{Pos: s.PosOf(f, key), Rule: "type", Msg: fmt.Sprintf("%q: void has no size here", expr)})
					ok = false
				}
				return
			case KindStruct:
			default:
				return
			}
			switch st := names.Struct(t.Name); {
			case st != nil:
				t.Struct = st
			case names.Enum(t.Name) != nil:
				t.Kind, t.Enum = KindEnum, names.Enum(t.Name)
			case names.OpaqueType(t.Name) != nil:
				t.Kind = KindOpaque
				if !behindPtr {
					errs = append(errs, &Error{Pos: s.PosOf(f, key), Rule: "type", Msg: fmt.Sprintf("%q: opaque type %s can only be used behind a pointer", expr, t.Name)})
					ok = false
				}
			default:
				errs = append(errs, &Error{Pos: s.PosOf(f, key), Rule: "type", Msg: fmt.Sprintf("%q names %s, which is no builtin, [[struct]], [[enum]] or [[opaque_type]]; declare it or fix the spelling", expr, t.Name)})
				ok = false
			}
		}
		walk(t, false)
		if !ok {
			return nil
		}
		return t
	}
	sig := func(f *Fact, sg *Signature, key string) {
		if sg.Returns == "void" {
			sg.Ret = &Type{Kind: KindVoid, Name: "void"}
		} else {
			sg.Ret = typeOf(f, "returns", sg.Returns, true)
		}
		for i := range sg.Params {
			p := &sg.Params[i]
			k := key + "[" + itoa(i) + "].type"
			p.T = typeOf(f, k, p.Type, true)
			if p.Name == "" {
				errs = append(errs, &Error{Pos: s.PosOf(f, fmt.Sprintf("%s[%d]", key, i)), Rule: "required", Msg: fmt.Sprintf("%s: parameter %d has no name", f.Path, i)})
			}
		}
	}
	for i := range s.Forward {
		sig(&s.Forward[i].Fact, &s.Forward[i].Signature, "params")
	}
	for i := range s.Reverse {
		sig(&s.Reverse[i].Fact, &s.Reverse[i].Signature, "params")
	}
	for _, st := range s.Structs {
		for j := range st.Fields {
			fd := &st.Fields[j]
			fd.T = typeOf(&fd.Fact, "type", fd.Type, true)
			if fd.T != nil && fd.T.Kind == KindArray && fd.T.Len < 0 && j != len(st.Fields)-1 {
				errs = append(errs, &Error{Pos: s.PosOf(&fd.Fact, "type"), Rule: "type", Msg: fmt.Sprintf("%s.%s: a flexible array member must be the last field", st.Name, fd.Name)})
			}
		}
	}
	return errs
}

// Lookup is StructByName, EnumByName and OpaqueTypeByName of one spec as
// tables, for a caller that looks up many names: resolve does for every
// field and parameter, diff for every struct of either side, check for
// every member (layoutcheck/specmatch.Names), and the walks over every
// row made a whole library's fragment cost the square of its rows. Made
// by Spec.Lookup; it does not follow later changes to the spec's rows.
type Lookup struct {
	rows    []*Struct
	structs map[string]int // a name to the first struct (in rows) StructByName gives
	enums   map[string]*Enum
	opaques map[string]*OpaqueType
}

// Struct is StructByName(name) of the spec the table was made from.
func (l Lookup) Struct(name string) *Struct {
	if i := l.StructIndex(name); i >= 0 {
		return l.rows[i]
	}
	return nil
}

// StructIndex is Struct(name)'s place among the spec's structs, -1 for
// none: a caller choosing between the structs of several names takes
// the first in the spec's order.
func (l Lookup) StructIndex(name string) int {
	if i, ok := l.structs[name]; ok {
		return i
	}
	return -1
}

// Enum is EnumByName(name).
func (l Lookup) Enum(name string) *Enum { return l.enums[name] }

// OpaqueType is OpaqueTypeByName(name).
func (l Lookup) OpaqueType(name string) *OpaqueType { return l.opaques[name] }

// Lookup is s's tables: each name to the first row that StructByName,
// EnumByName or OpaqueTypeByName would return for it.
func (s *Spec) Lookup() Lookup {
	d := Lookup{rows: s.Structs, structs: map[string]int{}, enums: map[string]*Enum{}, opaques: map[string]*OpaqueType{}}
	for i, st := range s.Structs {
		for _, n := range append([]string{st.Name, st.CTag()}, st.Aliases...) {
			if _, ok := d.structs[n]; !ok {
				d.structs[n] = i
			}
		}
	}
	for i := range s.Enums {
		e := &s.Enums[i]
		for _, n := range []string{e.Name, e.Tag} {
			if _, ok := d.enums[n]; !ok {
				d.enums[n] = e
			}
		}
	}
	for i := range s.OpaqueTypes {
		o := &s.OpaqueTypes[i]
		for _, n := range []string{o.Name, o.Tag} {
			if _, ok := d.opaques[n]; !ok {
				d.opaques[n] = o
			}
		}
	}
	return d
}
