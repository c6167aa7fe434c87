package elfread

import (
	"errors"
	"fmt"
)

// MissingPartError: sound DWARF refers to a type in a part that was not
// found (a dwz supplement Lookup.AllowMissing let go, recorded in
// Debug.Missing). It is not a fault of the input: the fix is to say where
// the part is.
type MissingPartError struct {
	// Part is what is missing, as Debug.Missing names it: "the
	// supplementary DWARF file NAME (build-id ID, named by SECTION)".
	Part string
	// Off is the referenced DIE's offset in that part.
	Off uint64
}

func (e *MissingPartError) Error() string {
	return fmt.Sprintf("a type in %s (DIE %#x there), which was not found: pass --debug-dir with the directory holding it, or set DEBUGINFOD_URLS", e.Part, e.Off)
}

// dwarfErr is the one-line error about path for a fault met decoding its
// DWARF: a MissingPartError says what is missing, anything else is
// corrupted DWARF.
func dwarfErr(path string, err error) error {
	var mp *MissingPartError
	if errors.As(err, &mp) {
		return InputErrorf(path, "%w", err)
	}
	return InputErrorf(path, "corrupted DWARF: %v", err)
}
