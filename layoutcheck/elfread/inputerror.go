package elfread

import (
	"fmt"
	"strings"
)

// InputError is a problem with an input file itself (not an ELF, truncated,
// no DWARF anywhere). Its message is one line naming the file and the fix.
type InputError struct {
	Path string
	Msg  string
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Msg) }

// InputErrorf builds an InputError. Names taken from the input (section,
// symbol and struct names) may hold any byte; line breaks are escaped so the
// message stays one line whatever the file holds.
func InputErrorf(path, format string, args ...any) error {
	return &InputError{Path: path, Msg: oneLine.Replace(fmt.Sprintf(format, args...))}
}

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)
