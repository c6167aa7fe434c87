package collectives

import (
	"fmt"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// Error is a failed collectives call: the NRT_STATUS the C entry point would
// return and the exact message it would log (an abi.Msg* format, filled in),
// optionally followed by what caused it.
type Error struct {
	Status abi.NRTStatus
	Msg    string // the exact, spec-given message
	Err    error  // the cause, when there is one beyond Msg
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// fail builds an *Error from a spec message format.
func fail(st abi.NRTStatus, cause error, format string, args ...any) *Error {
	return &Error{Status: st, Msg: cfmt.Sprintf(format, args...), Err: cause}
}

// invalid is an argument the caller got wrong: a one-line error naming it.
func invalid(format string, args ...any) *Error {
	return &Error{Status: abi.NRTInvalid, Msg: fmt.Sprintf(format, args...)}
}

// Status is err's NRT_STATUS: NRT_SUCCESS for nil, NRT_FAILURE for errors not
// from this package.
func Status(err error) abi.NRTStatus {
	if err == nil {
		return abi.NRTSuccess
	}
	if e, ok := err.(*Error); ok {
		return e.Status
	}
	return abi.NRTFailure
}
