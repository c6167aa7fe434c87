package elfread

import (
	"errors"
	"io/fs"
	"testing"
)

// TestInputErrorfWraps: a cause named with %w stays reachable, the text is
// the one line fmt.Errorf would give, and a cause named with %v is text only.
func TestInputErrorfWraps(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "x", Err: fs.ErrPermission}
	err := InputErrorf("/lib/a.so", "cannot read: %w", cause)
	if want := "/lib/a.so: cannot read: open x: permission denied"; err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &pe) {
		t.Fatalf("the cause is lost: %#v", err)
	}
	if errors.Is(err, ErrNoDWARF) {
		t.Fatalf("a wrapped cause reads as ErrNoDWARF")
	}
	if err := InputErrorf("/lib/a.so", "cannot read: %v", cause); errors.Is(err, fs.ErrPermission) {
		t.Fatalf("%%v kept the cause: %#v", err)
	}
}
