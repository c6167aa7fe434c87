package typemodel

// MaxDepth bounds every walk down a chain of types (array of array of ...,
// typedef of typedef of ..., a declarator's levels). Real chains are a few
// links; a chain that loops (crafted input: an array whose element is
// itself) ends here.
const MaxDepth = 64

// MaxSize is where computed sizes saturate, so that offset + size sums
// never wrap (2^62 bytes; nothing real comes close).
const MaxSize = 1 << 62

// SatAdd adds two sizes or offsets read from the input, saturating at
// MaxSize (and at -MaxSize below).
func SatAdd(a, b int64) int64 {
	a, b = min(max(a, -MaxSize), MaxSize), min(max(b, -MaxSize), MaxSize)
	// |a|, |b| <= 2^62: the sum fits in an int64 but for 2^62 + 2^62.
	if a > 0 && b > MaxSize-a {
		return MaxSize
	}
	return max(a+b, -MaxSize)
}

// satMul multiplies two non-negative sizes, saturating at MaxSize.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > MaxSize/b {
		return MaxSize
	}
	return a * b
}

// StripTypedefs follows typedefs to the type they name.
func StripTypedefs(t *Type) *Type {
	for range MaxDepth {
		if t == nil || t.Kind != Typedef {
			return t
		}
		t = t.Elem
	}
	return t
}

// StripQuals follows qualifiers (const, volatile, restrict, _Atomic) to
// the type they qualify.
func StripQuals(t *Type) *Type {
	for range MaxDepth {
		if t == nil || !t.Kind.Qualifier() {
			return t
		}
		t = t.Elem
	}
	return t
}

// Strip follows typedefs and qualifiers, in any order, to the type under
// them. A chain that loops ends at MaxDepth on a typedef or qualifier.
func Strip(t *Type) *Type {
	for range MaxDepth {
		if t == nil || t.Kind != Typedef && !t.Kind.Qualifier() {
			return t
		}
		t = t.Elem
	}
	return t
}

// Typedefs lists the typedef names met from t down to the type they name,
// outermost first ("uint32_t", "__uint32_t").
func Typedefs(t *Type) []string {
	var out []string
	for range MaxDepth {
		switch {
		case t == nil:
			return out
		case t.Kind == Typedef:
			out = append(out, t.Name)
		case !t.Kind.Qualifier():
			return out
		}
		t = t.Elem
	}
	return out
}

// IsVoid: t is void (nil stands for void too), under typedefs and
// qualifiers.
func IsVoid(t *Type) bool {
	s := Strip(t)
	return s == nil || s.Kind == Void
}

// SizeOf is the byte size of t: the size the DIE states, or for an array
// without one the element's times the count (a flexible array is 0), for a
// typedef or qualifier the named type's, for a pointer or reference 8 when
// the DIE states none (the x86-64 data model), for void or a function the
// stated size or 0. Sizes saturate at MaxSize;
// a chain that loops has size 0.
func SizeOf(t *Type) int64 {
	mult := int64(1)
	for range MaxDepth {
		if t == nil {
			return 0
		}
		switch t.Kind {
		case Typedef, Const, Volatile, Restrict, Atomic:
			if t.HasSize {
				return satMul(max(t.Size, 0), mult)
			}
			t = t.Elem
			continue
		case Array:
			if t.HasSize && t.Size > 0 {
				return satMul(t.Size, mult)
			}
			if t.Count <= 0 {
				return 0
			}
			mult = satMul(mult, t.Count)
			t = t.Elem
			continue
		case Void, Func:
			// A function type has no size in C; a DIE that states one
			// (Go's func values: DW_AT_byte_size 8, a pointer) is taken
			// at its word, as for any other kind.
			if !t.HasSize {
				return 0
			}
			return satMul(max(t.Size, 0), mult)
		case Pointer, Reference, RvalueReference:
			if !t.HasSize {
				return satMul(8, mult)
			}
		}
		if !t.HasSize {
			return 0
		}
		return satMul(max(t.Size, 0), mult)
	}
	return 0
}

// AlignOf is the x86-64 alignment of t: a struct's is its largest
// member's (or its DW_AT_alignment when larger), an array's its element's,
// a pointer's and a function's 8, a scalar's its size rounded as the
// psABI does (16 at most; a complex type's its part's). Each struct is walked once (one that holds
// itself, only possible in crafted input, adds nothing the second time).
func AlignOf(t *Type) int64 {
	return alignOf(t, nil, 0)
}

func alignOf(t *Type, seen map[*Type]bool, depth int) int64 {
	if depth > MaxDepth {
		return 1
	}
	t = Strip(t)
	if t == nil {
		return 1
	}
	switch t.Kind {
	case Array:
		return max(alignOf(t.Elem, seen, depth+1), t.Align, 1)
	case Struct, Class, Union:
		if seen[t] {
			return 1
		}
		if seen == nil {
			seen = map[*Type]bool{}
		}
		seen[t] = true
		a := max(t.Align, 1)
		for i := range t.Fields {
			if !t.Fields[i].Virtual {
				a = max(a, alignOf(t.Fields[i].Type, seen, depth+1))
			}
		}
		return a
	case Pointer, Reference, RvalueReference, Func, PtrToMember:
		return 8
	case Void:
		return 1
	}
	s := SizeOf(t)
	if t.Kind == Base && t.Encoding == EncComplexFloat {
		s /= 2 // a complex type aligns as its real part (x86-64 psABI, §3.1.2)
	}
	switch {
	case t.Align > 0:
		return t.Align
	case s <= 0:
		return 1
	case s >= 16:
		return 16
	case s&(s-1) != 0:
		return 8
	}
	return s
}

// StructAlign is the alignment of a struct's layout: its DW_AT_alignment
// or 1, raised by every member that is not a virtual base.
func StructAlign(t *Type) int64 {
	if t == nil {
		return 1
	}
	a := max(t.Align, 1)
	for i := range t.Fields {
		if !t.Fields[i].Virtual {
			a = max(a, AlignOf(t.Fields[i].Type))
		}
	}
	return a
}

// IntShape classifies an integer or character base type (under typedefs
// and qualifiers) by size and signedness, so that unsigned int, uint32_t
// and __u32 compare equal. Booleans, floats and the rest are not integers.
func IntShape(t *Type) (size int64, signed, ok bool) {
	s := Strip(t)
	if s == nil || s.Kind != Base || !s.Encoding.Integer() {
		return 0, false, false
	}
	return s.Size, s.Encoding.Signed(), true
}

// EmptyClass: t is a struct or class of at most one byte without data
// members (an empty C++ base, std::allocator<char>).
func EmptyClass(t *Type) bool {
	s := Strip(t)
	if s == nil || !s.Kind.Aggregate() || SizeOf(s) > 1 {
		return false
	}
	for i := range s.Fields {
		if !s.Fields[i].Base {
			return false
		}
	}
	return true
}
