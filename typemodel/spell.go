package typemodel

import (
	"strconv"
	"strings"
)

// maxSpellDepth bounds the declarator walk (pointer to array of pointer
// to ...); real declarators nest a few levels, a looping chain of crafted
// input ends as "...". maxSpellSteps bounds a whole spelling, parameter
// lists included (a function taking a pointer to itself).
const (
	maxSpellDepth = 32
	maxSpellSteps = 256
)

// Spell is the one spelling of a type as C's abstract declarator, as gdb's
// ptype writes it: "int", "const char *", "FILE *", "void *",
// "int (*)[7]", "void (*)(int, ...)", "char [16]", "struct s *const".
// Every tool that prints or compares a type's spelling uses it, so that
// what extract writes is what check reads back.
func Spell(t *Type) string { return Decl(t, "") }

// Decl spells a declaration of name with type t by C's inside-out
// declarator rule: "int *(*d[10])[4]", "int (*F[7])(void)",
// "char *const q", "volatile int a[7]". An empty name gives Spell.
func Decl(t *Type, name string) string {
	return DeclWith(t, name, SpellOptions{})
}

// SpellOptions change how DeclWith spells the named part of a declarator.
type SpellOptions struct {
	// Base, when set, spells the named part (a typedef, tag or base type);
	// "" leaves it to the default. show --c uses it to inline anonymous
	// bodies and give C++ names C identifiers.
	Base func(*Type) string
	// StrictC: a parameter list of "..." alone (a C++ vtable slot) is
	// written "()", which C before C23 accepts.
	StrictC bool
}

// DeclWith is Decl with options.
func DeclWith(t *Type, name string, opt SpellOptions) string {
	s := speller{opt: opt}
	return s.decl(t, name, 0)
}

type speller struct {
	opt   SpellOptions
	steps int
}

// quals is the set of qualifiers met on the way down to a named type.
type quals uint8

const (
	qConst quals = 1 << iota
	qVolatile
	qRestrict
	qAtomic
)

func qualOf(k Kind) quals {
	switch k {
	case Const:
		return qConst
	case Volatile:
		return qVolatile
	case Restrict:
		return qRestrict
	case Atomic:
		return qAtomic
	}
	return 0
}

// prefix writes the qualifiers in gdb's order (const, volatile, restrict,
// _Atomic), each once, each followed by a space.
func (q quals) prefix() string {
	if q == 0 {
		return ""
	}
	var b strings.Builder
	for _, w := range []struct {
		q quals
		s string
	}{{qConst, "const "}, {qVolatile, "volatile "}, {qRestrict, "restrict "}, {qAtomic, "_Atomic "}} {
		if q&w.q != 0 {
			b.WriteString(w.s)
		}
	}
	return b.String()
}

// decl renders t around d; depth counts the levels already walked,
// parameter lists included, so a function type that takes itself ends too.
func (s *speller) decl(t *Type, d string, depth int) string {
	var q quals
	for ; ; depth++ {
		if s.steps++; depth > maxSpellDepth || s.steps > maxSpellSteps {
			return joinDecl("...", d)
		}
		if t == nil {
			return joinDecl(q.prefix()+s.name(t), d)
		}
		switch t.Kind {
		case Const, Volatile, Restrict, Atomic:
			q |= qualOf(t.Kind)
			t = t.Elem
			continue
		case Pointer, Reference, RvalueReference, PtrToMember:
			op := "*"
			switch t.Kind {
			case Reference:
				op = "&"
			case RvalueReference:
				op = "&&"
			case PtrToMember:
				op = "::*"
				if c := Strip(t.Class); c != nil && c.Name != "" {
					op = c.Name + op
				} else {
					op = s.name(t.Class) + op
				}
			}
			if p := q.prefix(); d == "" {
				d = op + strings.TrimSuffix(p, " ")
			} else {
				d = op + p + d
			}
			q = 0
			if bindsTighter(t.Elem) {
				d = "(" + d + ")"
			}
			t = t.Elem
			continue
		case Array:
			// A qualifier of an array qualifies its elements: it stays
			// pending until the element's named type is reached.
			d += "[" + countWord(t.Count) + "]"
			t = t.Elem
			continue
		case Func:
			q = 0
			d += "(" + s.params(t, depth) + ")"
			t = t.Elem
			continue
		}
		return joinDecl(q.prefix()+s.name(t), d)
	}
}

// joinDecl puts the named part before the declarator: "char [16]",
// "int (*)[7]", "const char *".
func joinDecl(base, d string) string {
	if d == "" {
		return base
	}
	return base + " " + d
}

// bindsTighter: an array or function declarator binds tighter than a
// pointer's '*', so a pointer to one takes parentheses.
func bindsTighter(t *Type) bool {
	for range maxSpellDepth {
		if t == nil {
			return false
		}
		switch {
		case t.Kind.Qualifier():
			t = t.Elem
		case t.Kind == Array || t.Kind == Func:
			return true
		default:
			return false
		}
	}
	return false
}

func countWord(n int64) string {
	if n < 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func (s *speller) params(f *Type, depth int) string {
	ps := f.Params
	if f.ObjectParam && len(ps) > 0 {
		ps = ps[1:] // void (C::*)(int), not (C *, int)
	}
	if len(ps) == 0 {
		switch {
		case f.Variadic && s.opt.StrictC:
			return ""
		case f.Variadic:
			return "..."
		}
		return "void"
	}
	parts := make([]string, 0, len(ps)+1)
	for _, p := range ps {
		parts = append(parts, s.decl(p, "", depth+1))
	}
	if f.Variadic {
		parts = append(parts, "...")
	}
	return strings.Join(parts, ", ")
}

// name spells the named part of a declarator: a typedef, tag or base type.
func (s *speller) name(t *Type) string {
	if s.opt.Base != nil {
		if n := s.opt.Base(t); n != "" {
			return n
		}
	}
	return Name(t)
}

// Name is the named part of a type's spelling: "void", a typedef's name,
// "struct tag", "union {...}" for an anonymous one, "enum e", a base
// type's name; "<kind>" for a node with nothing to name it by.
func Name(t *Type) string {
	if t == nil {
		return "void"
	}
	switch t.Kind {
	case Void:
		return "void"
	case Struct, Class, Union, Enum:
		if t.Name == "" {
			return t.Kind.String() + " {...}"
		}
		return t.Kind.String() + " " + t.Name
	}
	if t.Name != "" {
		return t.Name
	}
	return "<" + t.Kind.String() + ">"
}
