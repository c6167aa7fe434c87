package spec

import "strings"

// Prototype is the signature as a caller sees it: return and parameter types
// without parameter names or spaces ("char*,u32"), so that two signatures
// with the same Prototype are one C prototype. `release new` compares a
// binary's prototypes with the spec's by it, `diff` two releases'.
func (s Signature) Prototype() string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(s.Returns, " ", ""))
	for _, p := range s.Params {
		b.WriteString("," + strings.ReplaceAll(p.Type, " ", ""))
	}
	return b.String()
}

// OpaqueHolding returns the opaque range of s that holds the bytes
// [off, end), or nil. The checker asks it of a DWARF member, the diff of a
// field of the other release.
func (s *Struct) OpaqueHolding(off, end int64) *Opaque {
	for i := range s.Opaque {
		if o := &s.Opaque[i]; off >= int64(o.Offset) && end <= int64(o.End()) {
			return o
		}
	}
	return nil
}
