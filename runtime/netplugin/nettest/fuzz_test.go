package nettest_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

// proxyFuzz is the C driver of testdata/proxyfuzz.c (the proxy's list checks
// and ticks, net_proxy.c, under ASan/UBSan when the compiler has them), one
// child per test binary.
var proxyFuzz struct {
	once   sync.Once
	err    error
	mu     sync.Mutex
	in     io.Writer
	out    io.Reader
	stderr tail
}

// tail keeps the last 64 KiB written: a long fuzz run's refusal lines
// would otherwise grow without bound.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > 64<<10 {
		w.b = append(w.b[:0:0], w.b[len(w.b)-64<<10:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

func startProxyFuzz(t testing.TB) {
	proxyFuzz.once.Do(func() {
		tr, err := builder.Open(abi.Release)
		if err != nil {
			proxyFuzz.err = err
			return
		}
		dir, err := os.MkdirTemp("", "nrtabi-proxyfuzz-")
		if err != nil {
			proxyFuzz.err = err
			return
		}
		bin := filepath.Join(dir, "proxyfuzz")
		srcs := []string{filepath.Join(tr.NetDoubleSourceDir(), "nettest", "testdata", "proxyfuzz.c"),
			filepath.Join(tr.LibnccomSourceDir(), "net_proxy.c"), filepath.Join(tr.LibnccomSourceDir(), "log.c")}
		flags := []string{"-I" + tr.LibnccomSourceDir(), "-lpthread"}
		if _, err := builder.SanitizerRuntime(context.Background()); err == nil {
			flags = append(flags, "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
		}
		if proxyFuzz.err = tr.BuildProgram(context.Background(), bin, srcs, flags...); proxyFuzz.err != nil {
			return
		}
		cmd := proc.Command(context.Background(), bin)
		cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
		cmd.Stderr = &proxyFuzz.stderr
		if proxyFuzz.in, proxyFuzz.err = cmd.StdinPipe(); proxyFuzz.err != nil {
			return
		}
		if proxyFuzz.out, proxyFuzz.err = cmd.StdoutPipe(); proxyFuzz.err != nil {
			return
		}
		if proxyFuzz.err = cmd.Start(); proxyFuzz.err == nil {
			go func() { _ = cmd.Wait(); os.RemoveAll(dir) }()
		}
	})
	if proxyFuzz.err != nil {
		t.Fatal(proxyFuzz.err)
	}
}

// proxyList runs one record: the start status and the ticks' outcome.
func proxyList(t testing.TB, rec []byte) (start, outcome byte) {
	startProxyFuzz(t)
	proxyFuzz.mu.Lock()
	defer proxyFuzz.mu.Unlock()
	if _, err := proxyFuzz.in.Write(rec); err != nil {
		t.Fatalf("proxyfuzz: %v\n%s", err, proxyFuzz.stderr.String())
	}
	var out [2]byte
	if _, err := io.ReadFull(proxyFuzz.out, out[:]); err != nil {
		t.Fatalf("proxyfuzz died (a sanitizer report is on its stderr): %v\n%s", err, proxyFuzz.stderr.String())
	}
	return out[0], out[1]
}

// record lays a list out for the driver: header, then entries.
func record(nOps, flags byte, src, dst [][8]byte) []byte {
	b := []byte{nOps, byte(len(src)), byte(len(dst)), flags}
	for _, e := range append(src, dst...) {
		b = append(b, e[:]...)
	}
	return b
}

func entry(op uint16, size byte, rank int8, mark byte) [8]byte {
	return [8]byte{byte(op), byte(op >> 8), size, byte(rank), mark}
}

// A good list finishes, with "call again" on every other post too; the
// planted faults are refused or fail, never run past their end.
func TestProxyListsByDriver(t *testing.T) {
	good := record(1, 0, [][8]byte{entry(0, 64, -1, 0), entry(0, 0, 0, 1), entry(0, 0, 0, 2)},
		[][8]byte{entry(0, 64, 2, 0), entry(0, 0, 0, 1), entry(0, 0, 0, 2)})
	for _, c := range []struct {
		name           string
		rec            []byte
		start, outcome byte
	}{
		{"good", good, byte(abi.NRTSuccess), 0},
		{"call-again", append([]byte{good[0], good[1], good[2], 1}, good[4:]...), byte(abi.NRTSuccess), 0},
		{"oversized-receive", append([]byte{good[0], good[1], good[2], 2}, good[4:]...), byte(abi.NRTSuccess), 1},
		{"unregistered", append([]byte{good[0], good[1], good[2], 4}, good[4:]...), byte(abi.NRTInvalid), 2},
		{"no-end", record(1, 0, [][8]byte{entry(0, 8, -1, 0)}, [][8]byte{entry(0, 0, 0, 2)}), byte(abi.NRTInvalid), 2},
		{"bad-op", record(1, 0, [][8]byte{entry(3, 8, -1, 0), entry(0, 0, 0, 2)}, [][8]byte{entry(0, 0, 0, 2)}), byte(abi.NRTInvalid), 2},
		{"self", record(1, 0, [][8]byte{entry(0, 8, 0, 0), entry(0, 0, 0, 2)}, [][8]byte{entry(0, 0, 0, 2)}), byte(abi.NRTInvalid), 2},
		{"bad-mark", record(1, 0, [][8]byte{entry(0, 8, 1, 9), entry(0, 0, 0, 2)}, [][8]byte{entry(0, 0, 0, 2)}), byte(abi.NRTInvalid), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, outcome := proxyList(t, c.rec)
			if start != c.start || outcome != c.outcome {
				t.Errorf("start %d, outcome %d; want %d, %d", start, outcome, c.start, c.outcome)
			}
		})
	}
}

// Any list: the driver survives (ASan/UBSan), a started list ends (done
// or failed) within its ticks, and one that is refused never ran.
func FuzzProxyList(f *testing.F) {
	f.Add([]byte{1, 3, 3, 0, 0, 0, 64, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
		0, 0, 64, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{4, 16, 1, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		n := int(data[1]%17) + int(data[2]%17)
		rec := append([]byte(nil), data[:4]...)
		body := data[4:]
		for i := 0; i < n; i++ {
			var e [8]byte
			copy(e[:], body[min(len(body), 8*i):min(len(body), 8*i+8)])
			rec = append(rec, e[:]...)
		}
		start, outcome := proxyList(t, rec)
		if start == byte(abi.NRTSuccess) && outcome > 1 {
			t.Errorf("a started list did not end: outcome %d", outcome)
		}
		if start != byte(abi.NRTSuccess) && outcome != 2 {
			t.Errorf("a refused list ran: outcome %d", outcome)
		}
	})
}
