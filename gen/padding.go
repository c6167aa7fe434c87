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
// rounded up to the member's own alignment. A field's alignment is its
// type's, so a field the natural layout does not put at its spec offset is
// a spec that contradicts C, and the size and offset assertions refuse it
// (TestMutationBites). An opaque range is bytes, of alignment 1, standing
// for members whose alignment the spec does not say — an 8-byte-aligned
// anonymous union after a u32 at 0 is the range 8..16, not 4..12 — so
// before a range, and only there, explicit padding fills whatever gap the
// natural layout leaves (docs/generator.md#padding).
type placed struct {
	spec.Member
	At, Size int
}

// isPadding reports whether p is padding rather than a spec member.
func (p placed) isPadding() bool { return p.Field == nil && p.Opaque == nil }

// placeMembers lists st's members with the padding that puts each opaque
// range at its spec offset.
func placeMembers(st *spec.Struct) []placed {
	var out []placed
	end := 0
	for _, m := range st.Members() {
		if f := m.Field; f != nil {
			out = append(out, placed{Member: m, At: f.Offset, Size: f.T.Size()})
			end = max(end, f.End())
			continue
		}
		o := m.Opaque
		if o.Offset > end {
			out = append(out, placed{At: end, Size: o.Offset - end})
		}
		out = append(out, placed{Member: m, At: o.Offset, Size: o.Size})
		end = max(end, o.End())
	}
	return out
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
