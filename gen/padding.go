package gen

import (
	"fmt"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// placed is one member of a generated struct, in offset order: a spec field
// or opaque range, or (both nil) explicit padding of Size bytes at At.
//
// C and Go lay a struct out from its member types; that puts a member at its
// spec offset only when the offset is where the previous member ends,
// rounded up to the member's own alignment. An opaque range is bytes
// (alignment 1) and often stands for a member of larger alignment — an
// 8-byte-aligned anonymous union after a u32 at 0 is the range 8..16, not
// 4..12 — and a hand-written spec may leave bytes between two members
// undescribed. Wherever the natural position is short of the spec offset,
// explicit padding fills the gap (docs/generator.md#padding).
type placed struct {
	spec.Member
	At, Size int
}

// isPadding reports whether p is padding rather than a spec member.
func (p placed) isPadding() bool { return p.Field == nil && p.Opaque == nil }

// placeMembers lists st's members with the padding that puts each at its
// spec offset, and the tail padding that makes the size the spec's. A
// member the spec places before its natural position (an overlap or a
// misaligned offset, both refused by the validator) gets no padding: the
// size and offset assertions report it.
func placeMembers(st *spec.Struct) []placed {
	var out []placed
	end := 0
	for _, m := range st.Members() {
		off, size, align := m.Offset(), 0, 1
		if m.Field != nil {
			size = m.Field.T.Size()
			if !st.Packed {
				align = m.Field.T.Align()
			}
		} else {
			size = m.Opaque.Size
		}
		if off > alignUp(end, align) {
			out = append(out, placed{At: end, Size: off - end})
		}
		out = append(out, placed{Member: m, At: off, Size: size})
		end = max(end, off+size)
	}
	if st.Size > alignUp(end, st.Align()) {
		out = append(out, placed{At: end, Size: st.Size - end})
	}
	return out
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// cPadding declares n bytes of padding at offset at as unnamed bit-fields:
// they take the bytes but declare no member, so the DWARF of a library
// built from the header holds exactly the spec's members and its holes,
// as the vendor's does, and the checker and extractor read it unchanged.
// Unnamed bit-fields add no alignment to the struct (x86-64 psABI, and
// gcc's layout for C and C++); each is at most 4 bytes wide and sits at a
// multiple of its width, so none straddles its unsigned int unit and none
// moves.
func cPadding(at, n int) cMember {
	var widths []string
	for p, end := at, at+n; p < end; {
		w := 4
		for w > 1 && (p%w != 0 || p+w > end) {
			w /= 2
		}
		widths = append(widths, fmt.Sprintf(":%d", w*8))
		p += w
	}
	return cMember{Decl: "unsigned int " + strings.Join(widths, ", "), Comment: fmt.Sprintf("+%d..%d padding", at, at+n)}
}
