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
