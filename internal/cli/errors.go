package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/internal/esc"
)

// Error is how a command stops other than with success: the exit status,
// and what is printed on stderr. A command returns it (Usagef, Errorf,
// Exit, or any error, which is exit 1 and its one line); App.report is the
// one place that prints it and maps it to the status.
type Error struct {
	Code int // the exit status
	// Msg is the one line, printed after "BINARY CMD: " and escaped; ""
	// prints none.
	Msg string
	// Lines are printed before Msg as they are: each already escaped and
	// naming its own place (a spec's file:line:col errors, a flag's line).
	Lines []string
	usage bool  // Msg is a usage error: the synopsis line follows it
	err   error // what Msg says, for errors.As and errors.Is
}

func (e *Error) Error() string {
	return strings.Join(append(append([]string(nil), e.Lines...), e.Msg), "\n")
}

func (e *Error) Unwrap() error { return e.err }

// Exit is a status with nothing to print: a command that completed with a
// verdict the status states (check's and diff's change bits), or a failure
// whose lines it already wrote. Exit(0) is nil.
func Exit(code int) error {
	if code == ExitOK {
		return nil
	}
	return &Error{Code: code}
}

// Lines is a failure of exit status code whose message is these lines,
// each printed as it is (they name their own place; escape what comes from
// an input before); cause is what they say, for errors.As.
func Lines(code int, cause error, lines ...string) error {
	return &Error{Code: code, Lines: lines, err: cause}
}

// Wrap is err with exit status code and its one line printed as any
// error's: for an error type of a package below (a usage error of
// layoutcheck, say) that means another status than 1.
func Wrap(code int, err error) error { return &Error{Code: code, Msg: err.Error(), err: err} }

// Stopped is what Parse returns when -h was answered: the command stops
// with status 0.
var Stopped = &Error{Code: ExitOK}

// StatusOf is the exit status err stands for.
func StatusOf(err error) int {
	var e *Error
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &e):
		return e.Code
	}
	return ExitError
}

// Message is what report prints for err, escaped as it prints it, without
// the command's name before each line and without the usage reminder: the
// text of an error document (cmd/nrtabi's errdoc.go).
func (c *Command) Message(err error) string {
	var lines []string
	var e *Error
	if errors.As(err, &e) {
		lines = append(lines, e.Lines...)
		if e.Msg != "" {
			lines = append(lines, esc.String(e.Msg))
		}
	} else if err != nil {
		lines = append(lines, esc.String(err.Error()))
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, c.FullName()+": ")
	}
	return strings.Join(lines, "\n")
}

// report prints err the one way (its lines, then "BINARY CMD: message",
// escaped, one line whatever the message holds, then for a usage error the
// synopsis) and returns its exit status.
func (a *App) report(c *Command, err error, errw io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if !errors.As(err, &e) {
		fmt.Fprintf(errw, "%s: %s\n", c.FullName(), esc.String(err.Error()))
		return ExitError
	}
	for _, l := range e.Lines {
		fmt.Fprintln(errw, l)
	}
	if e.Msg != "" {
		fmt.Fprintf(errw, "%s: %s\n", c.FullName(), esc.String(e.Msg))
	}
	if e.usage {
		fmt.Fprintf(errw, "usage: %s %s (run '%s help %s')\n", c.FullName(), c.Synopsis, a.Name, c.Name)
	}
	return e.Code
}
