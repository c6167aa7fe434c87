package layoutcheck

import "fmt"

// InputError is a problem with an input file itself (not an ELF, truncated,
// no DWARF anywhere). Its message is one line naming the file and the fix.
type InputError struct {
	Path string
	Msg  string
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Msg) }

func inputErr(path, format string, args ...any) error {
	return &InputError{Path: path, Msg: fmt.Sprintf(format, args...)}
}
