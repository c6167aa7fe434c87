package e2e

import (
	"bufio"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The reference libnccom's reading of NRTABI_BOOTSTRAP_PER_INSTANCE
// (nccom_per_instance, runtime/libnccom/hier.c) run in a C process
// (perinstancecheck.c, with ASan/UBSan when the compiler has them) that
// answers one value at a time, as the escaper's fuzz target does.
var perInstanceDriver = &cDriver{name: "perinstancecheck", libnccom: []string{"hier.c", "log.c"},
	env: []string{"NRTABI_LOG_LEVEL=warn"}, stderr: io.Discard} // one refusal line per bad value

// cPerInstance is nccom_per_instance with the variable set to s ("" unset):
// its status and L.
func cPerInstance(t testing.TB, s string) (int32, int32) {
	var b [8]byte
	rec := binary.LittleEndian.AppendUint32(nil, uint32(len(s)))
	perInstanceDriver.call(t, append(rec, s...), func(r *bufio.Reader) error {
		_, err := io.ReadFull(r, b[:])
		return err
	})
	return int32(binary.LittleEndian.Uint32(b[:])), int32(binary.LittleEndian.Uint32(b[4:]))
}

// refPerInstance is the contract both sides share (docs/bootstrap-hierarchy.md,
// runtime/transport/tcp's ParsePerInstance): "" is 0 (flat), a whole
// number in 1..BOOTSTRAP_PER_INSTANCE_MAX is L, anything else is refused.
func refPerInstance(s string) (l int, ok bool) {
	if s == "" {
		return 0, true
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > int(abi.BootstrapPerInstanceMax) {
		return 0, false
	}
	return v, true
}

// FuzzCPerInstance holds the C reading of L to the Go side's for any value
// an environment can hold (no NUL), with no memory error under ASan/UBSan.
func FuzzCPerInstance(f *testing.F) {
	for _, s := range []string{"", "4", "+4", "-4", "0", "007", "65536", "65537", " 4", "4 ", "4x", "0x10", "99999999999999999999", "\x1b[31m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 || len(s) > 1<<12 {
			t.Skip("an environment variable holds no NUL byte; long values are the same as short ones")
		}
		rc, l := cPerInstance(t, s)
		wantL, ok := refPerInstance(s)
		if ok && (rc != int32(abi.NRTSuccess) || int(l) != wantL) || !ok && rc != int32(abi.NRTInvalid) {
			t.Fatalf("nccom_per_instance(%q) = status %d L %d; want ok=%v L %d", s, rc, l, ok, wantL)
		}
	})
}
