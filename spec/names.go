package spec

// Names the generated C header gives what the spec models, shared by the
// generator that writes them and the checker and extractor that read them
// back from DWARF.

// OpaqueMemberPrefix starts the name of the filler member the header
// declares for an opaque range (NAME OFFSET); the checker and the extractor
// take such a member for the range itself.
const OpaqueMemberPrefix = "nrtabi_opaque_"

// VectorPrefix starts the C name of the three-pointer struct that spells
// std::vector<T> in the generated header; the extractor reads such a struct
// back as std::vector<T>.
const VectorPrefix = "nrtabi_vector_"

// IsIdent reports whether s is a C identifier: a letter or underscore, then
// letters, digits and underscores (ASCII).
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
