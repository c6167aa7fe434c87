package spec

import (
	"fmt"
	"strings"
)

// Absent fields (docs/spec-format.md#absent-fields): a [[struct.absent]] row
// says that the release's struct lacks a field the hand-written runtime
// names. It is a row with provenance like any other, never a field: the
// struct is laid out without it, and the generator gives the mirror presence
// accessors that answer false (docs/generator.md#absent-fields).

// headersKey is the [release] table holding header compile provenance.
const headersKey = "headers"

// resolveAbsent parses and binds the type of every absent row, as resolve
// does for fields: the accessors of the field have that type in every
// release, so it must name what this release declares.
func (s *Spec) resolveAbsent() Errors {
	var errs Errors
	for _, st := range s.Structs {
		for j := range st.Absent {
			a := &st.Absent[j]
			if a.Type == "" {
				errs = append(errs, &Error{Pos: s.PosOf(&a.Fact, "type"), Rule: "required",
					Msg: fmt.Sprintf("%s.%s (absent): type is required; write the type the runtime expects where the field is present", st.Name, a.Name)})
				continue
			}
			t, err := ParseType(a.Type)
			if err == nil {
				err = s.bindAbsent(t, false)
			}
			if err != nil {
				errs = append(errs, &Error{Pos: s.PosOf(&a.Fact, "type"), Rule: "type", Msg: fmt.Sprintf("%s.%s (absent): %v", st.Name, a.Name, err)})
				continue
			}
			a.T = t
		}
	}
	return errs
}

// bindAbsent binds the named types of t to this release's declarations: a
// struct or enum anywhere, an opaque type only behind a pointer.
func (s *Spec) bindAbsent(t *Type, behindPtr bool) error {
	for depth := 0; depth < maxTypeDepth && t != nil; depth++ {
		switch t.Kind {
		case KindPointer:
			t, behindPtr = t.Elem, true
			continue
		case KindArray, KindVector:
			behindPtr = behindPtr || t.Kind == KindVector
			t = t.Elem
			continue
		case KindVoid:
			if !behindPtr {
				return fmt.Errorf("%q: void has no size here", t.Name)
			}
			return nil
		case KindStruct:
		default:
			return nil
		}
		switch st, e := s.StructByName(t.Name), s.EnumByName(t.Name); {
		case st != nil:
			t.Struct = st
		case e != nil:
			t.Kind, t.Enum = KindEnum, e
		case s.OpaqueTypeByName(t.Name) != nil:
			t.Kind = KindOpaque
			if !behindPtr {
				return fmt.Errorf("opaque type %s can only be used behind a pointer", t.Name)
			}
		default:
			return fmt.Errorf("%s is no builtin, [[struct]], [[enum]] or [[opaque_type]] of this release; declare it or fix the spelling", t.Name)
		}
		return nil
	}
	return fmt.Errorf("type nests more than %d deep", maxTypeDepth)
}

// maxTypeDepth bounds the walk over one parsed type; ParseType bounds the
// nesting it builds far below it.
const maxTypeDepth = 64

// absent holds st's absent rows to a name that is an identifier, written
// once, and no field's: a release either has a field or lacks it.
func (c *checker) absent(st *Struct) {
	fields := map[string]*Field{}
	goFields := map[string]*Field{}
	for j := range st.Fields {
		f := &st.Fields[j]
		fields[f.Name] = f
		fields[f.StableName()] = f
		goFields[GoName(f.StableName())] = f
	}
	seen := map[string]*Fact{}
	for j := range st.Absent {
		a := &st.Absent[j]
		if p := CMemberProblem(a.Name); p != "" {
			c.at(&a.Fact, "name", "absent", "%s: absent field %s cannot be emitted as C: %s; name the field as the runtime does (its stable name)", st.Name, quoteName(a.Name), p)
			continue
		}
		if first, ok := seen[a.Name]; ok {
			c.at(&a.Fact, "name", "unique", "%s.%s is marked absent twice (first at %s)", st.Name, a.Name, first.Pos)
			continue
		}
		seen[a.Name] = &a.Fact
		if f := fields[a.Name]; f != nil {
			c.at(&a.Fact, "name", "absent", "%s.%s is marked absent, but the struct lists it as a field at %s; a release has the field or lacks it, so drop one", st.Name, a.Name, c.s.PosOf(&f.Fact, "name"))
		} else if f := goFields[GoName(a.Name)]; f != nil {
			// Its presence accessors would be the field's Go name's.
			c.at(&a.Fact, "name", "absent", "%s.%s is marked absent, but the field %s at %s has its Go name %s; name the absent field as the runtime does, or drop the row", st.Name, a.Name, f.Name, c.s.PosOf(&f.Fact, "name"), GoName(a.Name))
		}
	}
}

// headers holds [release.headers] to a tree and to lists a compiler could
// be given again: header names in the prelude, flags that start with '-'.
func (c *checker) headers() {
	h := &c.s.Release.Headers
	if h.Pos.File == "" {
		return
	}
	if strings.TrimSpace(h.Tree) == "" {
		c.at(&h.Fact, "tree", "headers", "[release.headers] needs tree, the header tree the release was made from")
	}
	check := func(key string, list []string, problem func(string) string) {
		for i, v := range list {
			if p := problem(v); p != "" {
				c.at(&h.Fact, fmt.Sprintf("%s[%d]", key, i), "headers", "[release.headers] %s[%d] = %s: %s", key, i, Quote(v), p)
			}
		}
	}
	check("prelude", h.Prelude, func(v string) string {
		if !preludeRE().MatchString(v) {
			return "not a header name (letters, digits, '_', '/', '.', '-', ending in .h)"
		}
		return ""
	})
	path := func(v string) string {
		if v == "" {
			return "empty"
		}
		if strings.ContainsAny(v, "\n\t") {
			return "a path holds no line break or tab"
		}
		return TextProblem(v)
	}
	check("include", h.Include, path)
	check("include_dirs", h.IncludeDirs, path)
	check("order", h.Order, path)
	check("cflags", h.CFlags, func(v string) string {
		if !strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t") {
			return "not one compiler flag (one word starting with '-')"
		}
		return TextProblem(v)
	})
}

var preludeRE = lazyRE(`^[A-Za-z0-9_][A-Za-z0-9_/.-]*\.h$`)
