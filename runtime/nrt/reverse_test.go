package nrt

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/seamcheck"
)

// No reverse callback reaches a forward entry point, so the two binaries
// cannot recurse across the seam (docs/sources.md#s000-4). The Go side is proved on the
// call graph (internal/seamcheck: SSA and class hierarchy analysis from
// every //export function; its own test shows it catching planted calls).
func TestReverseCallbacksStayOnTheirSide(t *testing.T) {
	res, err := seamcheck.Check(seamcheck.Config{Dir: ".", Tags: abi.BuildTag})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Violations {
		t.Error(v)
	}
	if len(res.Callbacks) < len(Reverse) {
		t.Errorf("only %d //export functions were walked (%v); the boundary has %d reverse callbacks", len(res.Callbacks), res.Callbacks, len(Reverse))
	}
	t.Logf("%d callbacks, %d functions reached, no forward entry point among them", len(res.Callbacks), res.Reached)
}

// The C shims of reverse.c are outside the Go call graph: their compiled
// object refers to no forward symbol (seamcheck.CheckShims; its own test
// shows it catching planted calls).
func TestReverseShimsCallNoForward(t *testing.T) {
	res, err := seamcheck.CheckShims(seamcheck.Config{Dir: ".", Tags: abi.BuildTag})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Forward) > 0 {
		t.Errorf("reverse.c reaches the forward leg through %v", res.Forward)
	}
	t.Logf("reverse.o refers to %d symbols outside itself, none forward", len(res.Undefined))
}

// nec_ndl_printk reads up to the NUL, never past the size the caller gives
// nor PrintkMax, whatever size it claims.
func TestPrintkTextIsBounded(t *testing.T) {
	short := []byte("abc\x00def")
	long := bytes.Repeat([]byte("x"), 2*PrintkMax) // no NUL at all
	for _, c := range []struct {
		buf  []byte
		size uint32
		want string
	}{
		{short, 0x7fffffff, "abc"},
		{short, 0x80000000, "abc"},
		{short, 0xffffffff, "abc"},
		{short, 2, "ab"},
		{short, 0, ""},
		{long, PrintkMax, strings.Repeat("x", PrintkMax)},
		{long, 2 * PrintkMax, strings.Repeat("x", PrintkMax) + fmt.Sprintf(" [cut at %d bytes; the caller claimed %d]", PrintkMax, 2*PrintkMax)},
	} {
		if got := printkText(unsafe.Pointer(&c.buf[0]), c.size); got != c.want {
			t.Errorf("size %#x: %.40q..., want %.40q...", c.size, got, c.want)
		}
	}
}
