package spec

// IsFragment reports whether the spec is a struct fragment: files that declare
// structs (and the enums and opaque types they use) but no release, counts,
// slot table, symbols, constants or messages. `nrtabi extract` writes
// fragments; the loader validates their layouts and provenance only, and a
// checker takes the release-level facts from a full spec.
func (s *Spec) IsFragment() bool {
	return s.Release.Pos.File == "" && s.Counts.Pos.File == "" && s.SlotTable.Pos.File == "" &&
		len(s.VersionNodes) == 0 && len(s.Forward) == 0 && len(s.Reverse) == 0 && len(s.Constants) == 0 &&
		len(s.Messages) == 0 && len(s.Contradictions) == 0 && len(s.LinkBehaviours) == 0 && len(s.Structs) > 0
}
