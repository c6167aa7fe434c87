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
// one side reads of the other (docs/nrtabi-diff.md#enums).
func (s *Spec) EnumCrosses(e *Enum) bool {
	names := func(t string) bool {
		for _, w := range strings.FieldsFunc(t, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if w == e.Name || (e.Tag != "" && w == e.Tag) {
				return true
			}
		}
		return false
	}
	for _, st := range s.Structs {
		for _, f := range st.Fields {
			if names(f.Type) {
				return true
			}
		}
	}
	for _, f := range s.Forward {
		if names(f.Returns) {
			return true
		}
		for _, p := range f.Params {
			if names(p.Type) {
				return true
			}
		}
	}
	for _, r := range s.Reverse {
		if names(r.Returns) {
			return true
		}
		for _, p := range r.Params {
			if names(p.Type) {
				return true
			}
		}
	}
	return false
}
