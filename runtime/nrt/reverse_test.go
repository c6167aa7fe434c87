package nrt

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/nrtabi/nrtabi/internal/seamcheck"
)

// forwardCall matches a call into the forward leg: a trampoline, a neuron*
// entry point, or a read of the slot table.
var forwardCall = regexp.MustCompile(`\b(nccl[A-Z]\w*\s*\(|neuron[A-Z]\w*\s*\(|nrt_nccl_slots\b|C\.nccl[A-Z])`)

// forwardCalls lists the code lines (comments dropped) of src that reach the
// forward leg.
func forwardCalls(src string) []string {
	var hits []string
	inBlock := false
	for _, line := range strings.Split(src, "\n") {
		code := line
		if inBlock {
			end := strings.Index(code, "*/")
			if end < 0 {
				continue
			}
			code, inBlock = code[end+2:], false
		}
		for {
			start := strings.Index(code, "/*")
			if start < 0 {
				break
			}
			end := strings.Index(code[start:], "*/")
			if end < 0 {
				code, inBlock = code[:start], true
				break
			}
			code = code[:start] + code[start+end+2:]
		}
		if i := strings.Index(code, "//"); i >= 0 {
			code = code[:i]
		}
		if forwardCall.MatchString(code) {
			hits = append(hits, strings.TrimSpace(line))
		}
	}
	return hits
}

// No reverse callback reaches a forward entry point, so the two binaries
// cannot recurse across the seam (seed 000 §4). The Go side is proved on the
// call graph (internal/seamcheck: SSA and class hierarchy analysis from
// every //export function; its own test shows it catching planted calls).
func TestReverseCallbacksStayOnTheirSide(t *testing.T) {
	res, err := seamcheck.Check(seamcheck.Config{Dir: "."})
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

// The C shims of reverse.c are outside the Go call graph; their text is
// scanned for a forward call (comments dropped).
func TestReverseShimsCallNoForward(t *testing.T) {
	src, err := os.ReadFile("reverse.c")
	if err != nil {
		t.Fatal(err)
	}
	if hits := forwardCalls(string(src)); len(hits) > 0 {
		t.Errorf("reverse.c reaches the forward leg: %q", hits)
	}
}

func TestForwardCallsCatches(t *testing.T) {
	planted := "int nec_x(void)\n{\n\t/* ncclGetUniqueId( in a comment is fine */\n\treturn ncclGetUniqueId(id, 1, \"\");\n}\n"
	if hits := forwardCalls(planted); len(hits) != 1 || !strings.Contains(hits[0], "return ncclGetUniqueId") {
		t.Errorf("planted call: %q", hits)
	}
	for _, s := range []string{"x = nrt_nccl_slots.neuronFoo;", "rc := C.ncclBuildGraphComm(c)", "neuronGetPeerDeviceId (c, 1, &o);"} {
		if len(forwardCalls(s)) != 1 {
			t.Errorf("not caught: %s", s)
		}
	}
	if hits := forwardCalls("// ncclX(\nint y; /* neuronZ( */\n"); len(hits) != 0 {
		t.Errorf("comments caught: %q", hits)
	}
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
