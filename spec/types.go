package spec

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Kind classifies a type expression of the spec's small C type grammar.
type Kind int

// The kinds a spec type can have.
const (
	KindVoid Kind = iota
	KindInt
	KindBool
	KindChar
	KindPointer
	KindArray
	KindStruct
	KindEnum
	KindOpaque // declared with [[opaque_type]]: usable only behind a pointer
	KindMutex  // pthread_mutex_t
	KindVector // std::vector<T>: three pointers
	KindSystem // a system type with a known size (cpu_set_t)
)

// Type is a parsed type expression. Struct and enum references are resolved by
// Resolve; until then Ref names the referenced declaration.
type Type struct {
	Kind     Kind
	Name     string // builtin or referenced name as written
	Signed   bool
	Const    bool
	Volatile bool
	Elem     *Type // pointer target, array element, vector element
	Len      int   // array length; -1 for a flexible array member
	Struct   *Struct
	Enum     *Enum
}

// builtin describes a scalar known to the grammar on x86-64 LP64.
type builtin struct {
	kind   Kind
	size   int
	signed bool
	c      string // C spelling
	goType string // Go spelling
}

var builtins = sync.OnceValue(func() map[string]builtin {
	return map[string]builtin{
		"u8":              {KindInt, 1, false, "uint8_t", "uint8"},
		"u16":             {KindInt, 2, false, "uint16_t", "uint16"},
		"u32":             {KindInt, 4, false, "uint32_t", "uint32"},
		"u64":             {KindInt, 8, false, "uint64_t", "uint64"},
		"i8":              {KindInt, 1, true, "int8_t", "int8"},
		"i16":             {KindInt, 2, true, "int16_t", "int16"},
		"i32":             {KindInt, 4, true, "int32_t", "int32"},
		"i64":             {KindInt, 8, true, "int64_t", "int64"},
		"int":             {KindInt, 4, true, "int", "int32"},
		"unsigned":        {KindInt, 4, false, "unsigned int", "uint32"},
		"size_t":          {KindInt, 8, false, "size_t", "uint64"},
		"ssize_t":         {KindInt, 8, true, "ssize_t", "int64"},
		"time_t":          {KindInt, 8, true, "time_t", "int64"},
		"uintptr_t":       {KindInt, 8, false, "uintptr_t", "uintptr"},
		"bool":            {KindBool, 1, false, "bool", "bool"},
		"char":            {KindChar, 1, true, "char", "byte"},
		"void":            {KindVoid, 0, false, "void", ""},
		"pthread_mutex_t": {KindMutex, 40, false, "pthread_mutex_t", "PthreadMutex"},
		"cpu_set_t":       {KindSystem, 128, false, "cpu_set_t", "CPUSet"},
	}
})

// Builtin reports the C and Go spelling of a builtin scalar name.
func Builtin(name string) (c, goType string, ok bool) {
	b, ok := builtins()[name]
	return b.c, b.goType, ok
}

// ParseType parses a type expression such as "u32", "const char*",
// "void*[4]", "char[16]", "u64[]", "volatile u32*" or "std::vector<u32>".
// The grammar is postfix, read from the named type outwards: each '*' makes
// a pointer to what precedes it (a const or volatile after it qualifies that
// pointer: "char* const"), and a run of dimensions is one array in C order
// ("u8[2][3]": two arrays of three u8). So C's int *(*d[10])[4] is
// "int*[4]*[10]" and int (*g)[7] is "int[7]*". Named references are left
// unresolved.
func ParseType(s string) (*Type, error) {
	if len(s) > MaxTypeLen {
		return nil, fmt.Errorf("type %q...: %d characters; a type expression has at most %d", s[:32], len(s), MaxTypeLen)
	}
	p := &typeParser{src: s}
	t, err := p.parse(0, false)
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	return t, nil
}

// Limits of the type grammar. Real boundary types nest two or three levels;
// the caps keep a hostile spec from costing time or memory beyond its size.
const (
	// MaxTypeLen is the longest type expression accepted, in bytes.
	MaxTypeLen = 512
	// MaxTypeDepth is how many pointers, array dimensions and std::vector
	// levels one type expression may stack.
	MaxTypeDepth = 16
	// MaxObjectSize is the largest size or offset, in bytes, a spec may give
	// (2^31 - 1): sizes beyond it cannot be laid out in the boundary and would
	// overflow the arithmetic of the generated code.
	MaxObjectSize = 1<<31 - 1
)

type typeParser struct {
	src string
	i   int
}

func (p *typeParser) skip() {
	for p.i < len(p.src) && p.src[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) ident() string {
	p.skip()
	start := p.i
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' {
			p.i++
			continue
		}
		break
	}
	return p.src[start:p.i]
}

// parse reads a type; depth counts the levels already stacked around it,
// and inside std::vector<...> it stops at the closing '>'.
func (p *typeParser) parse(depth int, inVector bool) (*Type, error) {
	var cnst, vol bool
	var name string
	for {
		name = p.ident()
		switch name {
		case "const":
			cnst = true
			continue
		case "volatile":
			vol = true
			continue
		}
		break
	}
	if name == "" {
		return nil, fmt.Errorf("expected a type name at column %d", p.i+1)
	}
	var t *Type
	if name == "std::vector" {
		p.skip()
		if p.i >= len(p.src) || p.src[p.i] != '<' {
			return nil, fmt.Errorf("std::vector needs an element type: std::vector<u32>")
		}
		if depth++; depth > MaxTypeDepth {
			return nil, fmt.Errorf("more than %d levels of pointers, arrays and std::vector", MaxTypeDepth)
		}
		p.i++
		// The element is parsed in place and must end at the matching '>':
		// no rescan of the rest per level, so nesting costs linear time.
		elem, err := p.parse(depth, true)
		if err != nil {
			return nil, err
		}
		p.skip()
		if p.i >= len(p.src) || p.src[p.i] != '>' {
			return nil, fmt.Errorf("unbalanced <> in std::vector")
		}
		p.i++
		t = &Type{Kind: KindVector, Name: "std::vector", Elem: elem}
	} else if b, ok := builtins()[name]; ok {
		t = &Type{Kind: b.kind, Name: name, Signed: b.signed}
	} else {
		if strings.Contains(name, ":") {
			return nil, fmt.Errorf("unknown scoped name %q (only std::vector<...> is understood)", name)
		}
		// A reference to a struct, enum or opaque type; kind fixed by Resolve.
		t = &Type{Kind: KindStruct, Name: name}
	}
	t.Const, t.Volatile = cnst, vol
	for {
		p.skip()
		if p.i >= len(p.src) || p.src[p.i] == '>' && inVector {
			return t, nil
		}
		if depth++; depth > MaxTypeDepth {
			return nil, fmt.Errorf("more than %d levels of pointers, arrays and std::vector", MaxTypeDepth)
		}
		switch p.src[p.i] {
		case '*':
			p.i++
			t = &Type{Kind: KindPointer, Name: "*", Elem: t}
			// Qualifiers after a '*' qualify that pointer: "char* const"
			// is C's char *const.
			p.pointerQuals(t)
		case '[':
			end := strings.IndexByte(p.src[p.i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("missing ]")
			}
			num := strings.TrimSpace(p.src[p.i+1 : p.i+end])
			p.i += end + 1
			n := -1
			if num != "" {
				v, err := strconv.ParseUint(num, 0, 31)
				if err != nil || v == 0 {
					return nil, fmt.Errorf("array length %q is not a positive integer", num)
				}
				n = int(v)
			}
			// Dimensions read as in C, the first outermost: only the first
			// may be flexible (u8[][6], the kernel's u8 mac[][6]); a later
			// empty one would be an array of flexible arrays.
			if n < 0 && t.Kind == KindArray {
				return nil, fmt.Errorf("only the first dimension of an array may be flexible ([] then [N], as in C)")
			}
			t = wrapArray(t, n)
		default:
			return nil, fmt.Errorf("unexpected %q at column %d", p.src[p.i], p.i+1)
		}
	}
}

// pointerQuals reads the const and volatile written after a '*'.
func (p *typeParser) pointerQuals(t *Type) {
	for {
		save := p.i
		switch p.ident() {
		case "const":
			t.Const = true
		case "volatile":
			t.Volatile = true
		default:
			p.i = save
			return
		}
	}
}

// wrapArray appends a dimension: "u8[2][3]" is two arrays of three u8, as in C.
func wrapArray(t *Type, n int) *Type {
	if t.Kind == KindArray {
		inner := wrapArray(t.Elem, n)
		return &Type{Kind: KindArray, Name: "[]", Elem: inner, Len: t.Len}
	}
	return &Type{Kind: KindArray, Name: "[]", Elem: t, Len: n}
}

// Size is the type's size in bytes (x86-64 LP64). Valid after Resolve.
func (t *Type) Size() int {
	switch t.Kind {
	case KindArray:
		if t.Len < 0 {
			return 0
		}
		// Saturates past MaxObjectSize (the validator reports that), so the
		// product never wraps.
		e := t.Elem.Size()
		if e > 0 && t.Len > MaxObjectSize/e {
			return MaxObjectSize + 1
		}
		return t.Len * e
	case KindStruct:
		if t.Struct != nil {
			return t.Struct.Size
		}
	case KindEnum:
		if t.Enum != nil {
			return t.Enum.Size
		}
	}
	size, _ := t.scalarLayout()
	return size
}

// scalarLayout is the size and alignment of a pointer, a std::vector or a
// builtin, from its kind and name alone: a Type holds nothing else, so a
// release compiled into static data (spec/compiled) is written with
// exported fields only. Zero for anything else.
func (t *Type) scalarLayout() (size, align int) {
	switch t.Kind {
	case KindPointer:
		return 8, 8
	case KindVector:
		return 24, 8
	}
	b, ok := builtins()[t.Name]
	if !ok || b.kind != t.Kind {
		return 0, 0
	}
	switch b.kind {
	case KindMutex, KindSystem:
		return b.size, 8
	case KindVoid:
		return b.size, 1
	}
	return b.size, b.size
}

// Align is the type's alignment in bytes (x86-64 LP64). Valid after Resolve.
func (t *Type) Align() int {
	switch t.Kind {
	case KindArray:
		return t.Elem.Align()
	case KindStruct:
		if t.Struct != nil {
			return t.Struct.Align()
		}
	case KindEnum:
		if t.Enum != nil {
			return t.Enum.Size
		}
	}
	if _, align := t.scalarLayout(); align != 0 {
		return align
	}
	return 1
}

// Complete reports whether the type has a size, i.e. can be a struct member
// or a by-value parameter.
func (t *Type) Complete() bool {
	switch t.Kind {
	case KindVoid, KindOpaque:
		return false
	case KindArray:
		return t.Elem.Complete()
	}
	return true
}

// String renders the type back in the spec grammar.
func (t *Type) String() string {
	switch t.Kind {
	case KindPointer:
		return t.Elem.String() + "*" + strings.TrimSuffix(" "+quals(t), " ")
	case KindArray:
		dims := ""
		e := t
		for e.Kind == KindArray {
			if e.Len < 0 {
				dims += "[]"
			} else {
				dims += "[" + strconv.Itoa(e.Len) + "]"
			}
			e = e.Elem
		}
		return e.String() + dims
	case KindVector:
		return quals(t) + "std::vector<" + t.Elem.String() + ">"
	}
	return quals(t) + t.Name
}

func quals(t *Type) string {
	q := ""
	if t.Const {
		q += "const "
	}
	if t.Volatile {
		q += "volatile "
	}
	return q
}

// Base strips pointers and arrays.
func (t *Type) Base() *Type {
	for t.Kind == KindPointer || t.Kind == KindArray {
		t = t.Elem
	}
	return t
}

// Refs calls fn for every named (non-builtin) type the expression mentions.
func (t *Type) Refs(fn func(*Type)) {
	switch t.Kind {
	case KindPointer, KindArray, KindVector:
		t.Elem.Refs(fn)
	case KindStruct, KindEnum, KindOpaque:
		fn(t)
	}
}
