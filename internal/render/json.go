package render

import (
	"encoding/json"
	"io"
)

// JSON writes v as one JSON document, indented by two spaces, with a
// trailing newline: the form of every --format json.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
