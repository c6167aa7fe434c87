package e2e

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

// The reference libnccom's reading of NRTABI_BOOTSTRAP_PER_INSTANCE
// (nccom_per_instance, runtime/libnccom/hier.c) run in a C process
// (perinstancecheck.c, with ASan/UBSan when the compiler has them) that
// answers one value at a time, as the escaper's fuzz target does.
var (
	perOnce sync.Once
	perErr  error
	perMu   sync.Mutex
	perIn   io.Writer
	perOut  *bufio.Reader
)

func startPerInstance(t testing.TB) {
	perOnce.Do(func() {
		tr, err := builder.Open("")
		if err != nil {
			perErr = err
			return
		}
		dir, err := os.MkdirTemp("", "nrtabi-perinstance-")
		if err != nil {
			perErr = err
			return
		}
		bin := filepath.Join(dir, "perinstancecheck")
		srcs := []string{filepath.Join(tr.Root, "runtime", "e2e", "testdata", "common", "perinstancecheck.c"),
			filepath.Join(tr.LibnccomSourceDir(), "hier.c"), filepath.Join(tr.LibnccomSourceDir(), "log.c")}
		flags := []string{"-I" + tr.LibnccomSourceDir()}
		if _, err := builder.SanitizerRuntime(t.Context()); err == nil {
			flags = append(flags, "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
		}
		if perErr = tr.BuildProgram(t.Context(), bin, srcs, flags...); perErr != nil {
			return
		}
		// It lives as long as the test process; its input closing ends it.
		cmd := proc.Command(context.Background(), bin)
		cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1", "NRTABI_LOG_LEVEL=warn")
		cmd.Stderr = io.Discard // one refusal line per bad value
		var in io.WriteCloser
		var out io.ReadCloser
		if in, perErr = cmd.StdinPipe(); perErr != nil {
			return
		}
		if out, perErr = cmd.StdoutPipe(); perErr != nil {
			return
		}
		if perErr = cmd.Start(); perErr != nil {
			return
		}
		perIn, perOut = in, bufio.NewReader(out)
		go func() { _ = cmd.Wait(); os.RemoveAll(dir) }()
	})
	if perErr != nil {
		t.Fatal(perErr)
	}
}

// cPerInstance is nccom_per_instance with the variable set to s ("" unset):
// its status and L.
func cPerInstance(t testing.TB, s string) (int32, int32) {
	startPerInstance(t)
	perMu.Lock()
	defer perMu.Unlock()
	rec := binary.LittleEndian.AppendUint32(nil, uint32(len(s)))
	if _, err := perIn.Write(append(rec, s...)); err != nil {
		t.Fatalf("perinstancecheck: %v", err)
	}
	var b [8]byte
	if _, err := io.ReadFull(perOut, b[:]); err != nil {
		t.Fatalf("perinstancecheck died (a sanitizer report is on its stderr): %v", err)
	}
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
