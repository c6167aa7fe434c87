package release

import (
	"errors"
	"testing"

	"github.com/nrtabi/nrtabi/readers/elfread"
)

// TestWrapInputKeepsCause: an error release passes on is still the one-line
// *elfread.InputError callers test for, and its cause stays reachable.
func TestWrapInputKeepsCause(t *testing.T) {
	cause := errors.New("line one\nline two")
	err := wrapInput("/x/libnrt.so.1", cause, "%s", "nrt_nccl_slots")
	if !errors.Is(err, cause) {
		t.Fatalf("the cause is lost: %v", err)
	}
	var ie *elfread.InputError
	if !errors.As(err, &ie) || ie.Path != "/x/libnrt.so.1" {
		t.Fatalf("want an *elfread.InputError about /x/libnrt.so.1, got %T %v", err, err)
	}
	if want := `/x/libnrt.so.1: nrt_nccl_slots: line one\nline two`; err.Error() != want {
		t.Fatalf("got %q, want %q (one line)", err.Error(), want)
	}
}
