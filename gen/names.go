package gen

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// GoName turns a C identifier (snake_case or camelCase) into an exported Go
// name (spec.GoName: the validator holds the spec's names to one Go name per
// scope).
func GoName(c string) string { return spec.GoName(c) }

// cType is the C spelling of a named or builtin type, without declarator.
func cType(t *spec.Type) string {
	q := ""
	if t.Const {
		q += "const "
	}
	if t.Volatile {
		q += "volatile "
	}
	switch t.Kind {
	case spec.KindStruct:
		if td := t.Struct.Typedefs(); len(td) > 0 {
			return q + td[0]
		}
		return q + "struct " + t.Struct.CTag()
	case spec.KindEnum:
		return q + t.Enum.Name
	case spec.KindOpaque:
		return q + t.Name
	case spec.KindVector:
		return q + vectorName(t)
	}
	if c, _, ok := spec.Builtin(t.Name); ok {
		return q + c
	}
	return q + t.Name
}

// vectorName is the C name of the three-pointer struct for std::vector<T>.
func vectorName(t *spec.Type) string {
	return spec.VectorPrefix + vectorSuffix(t.Elem) + "_t"
}

func vectorSuffix(t *spec.Type) string {
	switch t.Kind {
	case spec.KindVector:
		return "vector_" + vectorSuffix(t.Elem)
	case spec.KindPointer:
		return vectorSuffix(t.Elem) + "_ptr"
	case spec.KindStruct:
		return t.Struct.CTag()
	}
	return strings.ReplaceAll(t.Name, " ", "_")
}

// pointerQuals spells the qualifiers of a pointer itself (char *const p).
func pointerQuals(t *spec.Type) string {
	switch {
	case t.Const && t.Volatile:
		return "const volatile"
	case t.Const:
		return "const"
	case t.Volatile:
		return "volatile"
	}
	return ""
}

// CDecl renders a C declaration of name with type t ("void *x[4]", "char id[128]").
func CDecl(t *spec.Type, name string) string {
	switch t.Kind {
	case spec.KindPointer:
		d := "*" + name
		if q := pointerQuals(t); q != "" {
			d = "*" + q
			if name != "" {
				d += " " + name
			}
		}
		if t.Elem.Kind == spec.KindArray {
			d = "(" + d + ")"
		}
		return CDecl(t.Elem, d)
	case spec.KindArray:
		if t.Len < 0 {
			return CDecl(t.Elem, name+"[]")
		}
		return CDecl(t.Elem, fmt.Sprintf("%s[%d]", name, t.Len))
	}
	base := cType(t)
	if name == "" {
		return base
	}
	if strings.HasPrefix(name, "*") || strings.HasPrefix(name, "(") {
		return base + " " + name
	}
	return base + " " + name
}

// cAbstract renders a type with no name, as in casts and function-pointer parameters.
func cAbstract(t *spec.Type) string {
	s := CDecl(t, "")
	return strings.TrimSpace(s)
}

// cParams renders a parameter list.
func cParams(ps []spec.Param) string {
	if len(ps) == 0 {
		return "void"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = CDecl(p.T, p.Name)
	}
	return strings.Join(parts, ", ")
}

// cArgs renders the parameter names as an argument list.
func cArgs(ps []spec.Param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name
	}
	return strings.Join(parts, ", ")
}

// cRet renders a return type ready to be followed by a name: "NRT_STATUS " or "void *".
func cRet(sg spec.Signature) string {
	r := cAbstract(sg.Ret)
	if strings.HasSuffix(r, "*") {
		return r
	}
	return r + " "
}

// cIdent turns a constant or message id into an upper-case C macro suffix.
func cIdent(s string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(s))
}

// releaseIdent makes a release name usable inside identifiers: 2.31.24 -> 2_31_24.
func releaseIdent(r string) string {
	return strings.NewReplacer(".", "_", "-", "_").Replace(r)
}
