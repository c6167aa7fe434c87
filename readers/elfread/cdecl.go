package elfread

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// maxDeclDepth bounds the declarator walk (pointer to array of pointer
// to ...); real declarators nest a few levels, a looping chain of corrupted
// DWARF ends here as "...". maxDeclSteps bounds a whole rendering, parameter
// lists included (a function taking a pointer to itself).
const (
	maxDeclDepth = 32
	maxDeclSteps = 256
)

// CDecl spells a declaration of name with the DWARF type t by C's
// inside-out declarator rule, as gdb's ptype does: "int *(*d[10])[4]",
// "int (*F[7])(void)", "char *const q", "volatile int a[7]". An empty name
// gives the abstract declarator ("int (*)[7]", "char [16]").
func CDecl(t godwarf.Type, name string) string {
	return declRenderer{steps: new(int)}.decl(t, name, 0)
}

// declRenderer renders declarators; base, when set, spells the named part
// (show --c uses it to inline anonymous bodies and map C++ names to C).
type declRenderer struct {
	base func(godwarf.Type) string
	// strictC: a parameter list of "..." alone (C++ vtable slots) is
	// written "()", which C before C23 accepts.
	strictC bool
	steps   *int // shared by the whole rendering
}

// decl renders t; depth counts the levels already walked, parameter lists
// included, so a function type that takes itself ends too.
func (r declRenderer) decl(t godwarf.Type, name string, depth int) string {
	d := name
	var quals map[string]bool
	for ; ; depth++ {
		if *r.steps++; depth > maxDeclDepth || *r.steps > maxDeclSteps {
			return "... " + d
		}
		switch x := t.(type) {
		case *godwarf.QualType:
			if quals == nil {
				quals = map[string]bool{}
			}
			quals[x.Qual] = true
			t = x.Type
			continue
		case *godwarf.PtrType:
			if q := qualPrefix(quals); d == "" {
				d = "*" + strings.TrimSuffix(q, " ")
			} else {
				d = "*" + q + d
			}
			quals = nil
			if needsParens(x.Type) {
				d = "(" + d + ")"
			}
			t = x.Type
			continue
		case *godwarf.ArrayType:
			// A qualifier of an array qualifies its elements: it stays
			// pending until the element's named type is reached, and is
			// printed once even when the element repeats it.
			d += "[" + countStr(x.Count) + "]"
			t = x.Type
			continue
		case *godwarf.FuncType:
			quals = nil
			d += "(" + r.params(x, depth) + ")"
			t = x.ReturnType
			continue
		}
		base := qualPrefix(quals) + r.name(t)
		if d == "" {
			return base
		}
		return base + " " + d
	}
}

// needsParens: a pointer to an array or a function binds with parentheses.
func needsParens(t godwarf.Type) bool {
	for range maxDeclDepth {
		switch x := t.(type) {
		case *godwarf.QualType:
			t = x.Type
		case *godwarf.ArrayType, *godwarf.FuncType:
			return true
		default:
			return false
		}
	}
	return false
}

// qualPrefix orders qualifiers as gdb does (const before volatile), each
// once: "*const p" after a '*', "const int" before a type name.
func qualPrefix(q map[string]bool) string {
	if len(q) == 0 {
		return ""
	}
	order := map[string]int{"const": 0, "volatile": 1, "restrict": 2}
	var list []string
	for k := range q {
		list = append(list, k)
	}
	sort.Slice(list, func(i, j int) bool {
		oi, iok := order[list[i]]
		oj, jok := order[list[j]]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return list[i] < list[j]
	})
	return strings.Join(list, " ") + " "
}

func (r declRenderer) params(f *godwarf.FuncType, depth int) string {
	if len(f.ParamType) == 0 {
		return "void"
	}
	if _, ok := f.ParamType[0].(*godwarf.DotDotDotType); ok && len(f.ParamType) == 1 && r.strictC {
		return ""
	}
	parts := make([]string, 0, len(f.ParamType))
	for _, p := range f.ParamType {
		if _, ok := p.(*godwarf.DotDotDotType); ok {
			parts = append(parts, "...")
			continue
		}
		parts = append(parts, r.decl(p, "", depth+1))
	}
	return strings.Join(parts, ", ")
}

// name spells the named part of a declarator: a typedef, tag or base type.
func (r declRenderer) name(t godwarf.Type) string {
	if r.base != nil {
		if s := r.base(t); s != "" {
			return s
		}
	}
	switch x := t.(type) {
	case nil, *godwarf.VoidType:
		return "void"
	case *godwarf.TypedefType:
		return x.Name
	case *godwarf.StructType:
		if x.StructName == "" {
			return x.Kind + " {...}"
		}
		return x.Kind + " " + x.StructName
	case *godwarf.EnumType:
		if x.EnumName == "" {
			return "enum {...}"
		}
		return "enum " + x.EnumName
	}
	if n := t.Common().Name; n != "" {
		return n
	}
	return fmt.Sprintf("<%s>", t.String())
}

// CDeclC is CDecl for C output: base spells the named parts (tags and
// typedefs made identifiers, anonymous bodies inline), and a parameter list
// of "..." alone (C++ vtable slots) is written "()", which C before C23
// accepts.
func CDeclC(t godwarf.Type, name string, base func(godwarf.Type) string) string {
	return declRenderer{base: base, strictC: true, steps: new(int)}.decl(t, name, 0)
}
