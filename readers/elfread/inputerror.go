package elfread

import (
	"errors"
	"fmt"
	"strings"
)

// InputError is a problem with an input file itself (not an ELF, truncated,
// no DWARF anywhere). Its message is one line naming the file and the fix.
type InputError struct {
	Path string
	Msg  string
	Err  error // ErrNoDWARF when the file and its debug files have none, else the cause named with %w, or nil
}

func (e *InputError) Error() string {
	if e.Path == "" { // a File from NewFile
		return e.Msg
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

func (e *InputError) Unwrap() error { return e.Err }

// ErrNoDWARF: neither the file nor any separate debug file holds DWARF, and
// no candidate debug file exists that was refused (a broken or mismatching
// one is a different error). Readers that can work from symbols alone
// (`release new`) go on without DWARF only then.
var ErrNoDWARF = errors.New("no DWARF")

// InputErrorf builds an InputError. Names taken from the input (section,
// symbol and struct names) may hold any byte; line breaks are escaped so the
// message stays one line whatever the file holds. As with fmt.Errorf, one
// %w operand stays reachable by errors.Is and errors.As; it must not hold
// ErrNoDWARF, which only the file's own search for DWARF may report.
func InputErrorf(path, format string, args ...any) error {
	e := fmt.Errorf(format, args...)
	return &InputError{Path: path, Msg: oneLine.Replace(e.Error()), Err: errors.Unwrap(e)}
}

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)
