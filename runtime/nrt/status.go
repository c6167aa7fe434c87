package nrt

import "errors"

// Status is an NRT_STATUS. It is an error, so a failed call can be tested
// with errors.Is(err, nrt.Status(...)); String is the C enumerator's name
// for every status the spec declares.
type Status rawStatus

func (s Status) String() string { return rawStatus(s).String() }
func (s Status) Error() string  { return rawStatus(s).String() }

// Statuses the typed API returns itself.
var (
	// ErrFailure is NRT_FAILURE: what every guarded trampoline returns once
	// the init-error sentinel is armed.
	ErrFailure = Status(statusFailure)
	// ErrInvalid is NRT_INVALID: the Go arguments cannot be passed on.
	ErrInvalid = Status(statusInvalid)
	// ErrUninitialized is NRT_UNINITIALIZED: Init has not run (or, for the
	// unguarded hot path, did not succeed), so there is nothing to call.
	ErrUninitialized = Status(statusUninitialized)
)

// CallError is a forward call that did not return NRT_SUCCESS: the neuron*
// entry point and its status.
type CallError struct {
	Symbol string
	Status Status
}

func (e *CallError) Error() string { return e.Symbol + ": " + e.Status.String() }
func (e *CallError) Unwrap() error { return e.Status }

// StatusOf extracts the NRT_STATUS of an error from this package:
// NRT_SUCCESS for nil, NRT_FAILURE for an error that carries none.
func StatusOf(err error) Status {
	if err == nil {
		return Status(statusSuccess)
	}
	var s Status
	if errors.As(err, &s) {
		return s
	}
	return ErrFailure
}

func callErr(symbol string, rc uint32) error {
	if rc == uint32(statusSuccess) {
		return nil
	}
	return &CallError{Symbol: symbol, Status: Status(rc)}
}
