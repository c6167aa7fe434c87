package spec

// IsFragment reports whether the spec is a struct fragment: files that declare
// structs and only the kinds that may go with them (the enums and opaque
// types they use), no release, counts, slot table, symbols, constants or
// messages. `nrtabi extract` writes fragments; the loader validates their
// layouts and provenance only, and a checker takes the release-level facts
// from a full spec.
func (s *Spec) IsFragment() bool {
	for _, k := range kinds {
		if k.present(s) && !k.fragment() {
			return false
		}
	}
	return len(s.Structs) > 0
}
