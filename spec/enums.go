package spec

import (
	"strings"
	"unicode"
)

// EnumSizeValid reports whether n is a size gcc gives an enum on x86-64:
// 4 for a plain one, 1 or 2 packed (or with a narrow underlying type), 8
// when a value needs more than 32 bits (docs/spec-format.md#enums).
func EnumSizeValid(n int) bool { return n == 1 || n == 2 || n == 4 || n == 8 }

// Signed reports whether the enum's underlying type is signed, as gcc
// chooses it: signed when a value is negative.
func (e *Enum) Signed() bool {
	for _, v := range e.Values {
		if v.Value < 0 {
			return true
		}
	}
	return false
}

// Range is the values the enum's underlying type holds: the signed range of
// its size when a value is negative, else the unsigned one (an 8-byte
// unsigned enum is capped at int64's maximum, the most a value holds).
func (e *Enum) Range() (lo, hi int64) {
	bits := uint(e.Size) * 8
	if !EnumSizeValid(e.Size) {
		bits = 32
	}
	if e.Signed() {
		return -1 << (bits - 1), 1<<(bits-1) - 1
	}
	if bits == 64 {
		return 0, 1<<63 - 1
	}
	return 0, 1<<bits - 1
}

// EnumCrosses reports whether e is used across the boundary: the type of a
// struct field or of a forward or reverse parameter or return, directly or
// through a pointer or array. A shifted value of such an enum changes what
// one side reads of the other (docs/nrtabi-diff.md#enums). For more than
// one enum, take Crossing once.
func (s *Spec) EnumCrosses(e *Enum) bool { return s.Crossing().Crosses(e) }

// Crossing is every name the spec's struct field types and forward and
// reverse prototypes spell (the words of [_A-Za-z0-9]), what EnumCrosses
// looks an enum's names up in: made once for a spec, where a walk over
// every field for each enum was a quarter of a check of vmlinux's fragment
// (1,133 enums, 45,000 fields).
type Crossing map[string]bool

// Crossing is s's names across the boundary.
func (s *Spec) Crossing() Crossing {
	c := Crossing{}
	add := func(t string) {
		for _, w := range strings.FieldsFunc(t, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			c[w] = true
		}
	}
	for _, st := range s.Structs {
		for _, f := range st.Fields {
			add(f.Type)
		}
	}
	for _, f := range s.Forward {
		add(f.Returns)
		for _, p := range f.Params {
			add(p.Type)
		}
	}
	for _, r := range s.Reverse {
		add(r.Returns)
		for _, p := range r.Params {
			add(p.Type)
		}
	}
	return c
}

// Crosses reports whether the spec c was made from spells e's name or tag
// across the boundary.
func (c Crossing) Crosses(e *Enum) bool {
	return c[e.Name] || e.Tag != "" && c[e.Tag]
}
