package cc

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The limits reach the driver and the children it starts: the fake driver
// prints its own and a child shell's.
func TestLimitsInherited(t *testing.T) {
	driver, _ := fakeDriver(t, "ulimit -v; ulimit -t; sh -c 'ulimit -v; ulimit -t'\nexit 1\n")
	t.Setenv("CC", driver)
	t.Setenv("CFLAGS", "")
	err := RunLimited(t.Context(), t.TempDir(), Limits{Memory: 512 << 20, CPU: 1500 * time.Millisecond}, "-c", "a.c")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v", err)
	}
	if got := strings.Fields(e.Output); strings.Join(got, " ") != "524288 2 524288 2" {
		t.Errorf("limits seen by the driver and its child: %q, want 524288 KiB and 2 s twice", e.Output)
	}
	if e.Driver[0] != driver || strings.Join(e.Args, " ") != "-c a.c" {
		t.Errorf("the error names %q %q, want the driver and its arguments, not the shell", e.Driver, e.Args)
	}
}

// A limit the user set on nrtabi that is lower than the one asked for
// stays.
func TestLimitsClamp(t *testing.T) {
	if got := clampLimit(0x7fff, 5); got != 5 { // no such resource: want as asked
		t.Errorf("clamp with an unknown resource = %d", got)
	}
	// A soft core-size limit of 0 under a higher hard one (core files are
	// nothing a test needs): clampLimit takes the soft limit, clampHard
	// the hard one, each only when lower than asked.
	var core syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &core); err != nil {
		t.Fatal(err)
	}
	if core.Max < 2 {
		t.Skipf("the hard core-size limit is %d: no room for a soft one under it", core.Max)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{Cur: 0, Max: core.Max}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_CORE, &core) })
	if got := clampLimit(syscall.RLIMIT_CORE, 2); got != 0 {
		t.Errorf("clampLimit(CORE, 2) under a soft limit of 0 = %d, want 0", got)
	}
	if got := clampHard(syscall.RLIMIT_CORE, 2); got != 2 {
		t.Errorf("clampHard(CORE, 2) under a hard limit of %d = %d, want 2", core.Max, got)
	}
	if core.Max < math.MaxInt64 {
		if got := clampHard(syscall.RLIMIT_CORE, math.MaxInt64); got != int64(core.Max) {
			t.Errorf("clampHard(CORE, max) = %d, want the hard limit %d", got, core.Max)
		}
	}
	if !strings.Contains(limitScript(Limits{Memory: 1 << 40}), "ulimit -v ") || strings.Contains(limitScript(Limits{}), "ulimit") {
		t.Errorf("scripts: %q %q", limitScript(Limits{Memory: 1 << 40}), limitScript(Limits{}))
	}
}

// Output past the cap is read and counted, not kept, and the driver is
// not blocked by a full pipe; Keep filters lines.
func TestLimitsOutput(t *testing.T) {
	driver, _ := fakeDriver(t, "i=0; while [ $i -lt 20000 ]; do echo \"x.h:1:1: error: line $i of an amplified error\"; i=$((i+1)); done; echo '. x.h' >&2\nhead -c 100000 /dev/zero | tr '\\0' a\necho\nexit 1\n")
	t.Setenv("CC", driver)
	t.Setenv("CFLAGS", "")
	var entered []string
	lim := Limits{Output: 4096, Keep: func(line string) bool {
		if strings.HasPrefix(line, ". ") {
			entered = append(entered, line)
			return false
		}
		return true
	}}
	err := RunLimited(t.Context(), t.TempDir(), lim, "-c", "a.c")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v", err)
	}
	if len(e.Output) > 4096 || !strings.HasPrefix(e.Output, "x.h:1:1: error: line 0 ") {
		t.Errorf("kept %d bytes: %.200q", len(e.Output), e.Output)
	}
	if e.Dropped < 900000 || !strings.Contains(err.Error(), strconv.FormatInt(e.Dropped, 10)+" more bytes of output not kept") {
		t.Errorf("dropped %d: %.300s", e.Dropped, err)
	}
	if len(entered) != 1 || entered[0] != ". x.h" {
		t.Errorf("Keep saw %q", entered)
	}
}

// The real compiler runs out of memory on an exponential macro within the
// limit, and says so.
func TestLimitsMemory(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	t.Setenv("CC", "")
	t.Setenv("CFLAGS", "")
	dir := t.TempDir()
	src := "#define S(x) #x\n#define X(x) S(x)\n#define A0 x\n"
	for i := 1; i <= 40; i++ {
		src += "#define A" + strconv.Itoa(i) + " A" + strconv.Itoa(i-1) + " A" + strconv.Itoa(i-1) + "\n"
	}
	src += "const char *p = X(A40);\n"
	if err := os.WriteFile(filepath.Join(dir, "exp.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := ObjectLimited(ctx, dir, "exp.c", "exp.o", Limits{Memory: 256 << 20, Output: 1 << 16})
	var e *Error
	if !errors.As(err, &e) || e.Exceeded != ExceededMemory {
		t.Fatalf("got %v, want a run out of memory", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s", took)
	}
}

// A driver that spins is stopped by the CPU limit even without a deadline.
func TestLimitsCPU(t *testing.T) {
	driver, _ := fakeDriver(t, "while :; do :; done\n")
	t.Setenv("CC", driver)
	t.Setenv("CFLAGS", "")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err := RunLimited(ctx, t.TempDir(), Limits{CPU: time.Second}, "-c", "a.c")
	var e *Error
	if !errors.As(err, &e) || e.Exceeded != ExceededCPU || ctx.Err() != nil {
		t.Fatalf("got %v (%q), want the CPU limit", err, e.Exceeded)
	}
}

// FuzzLimitedOutput: whatever the driver prints, in whatever pieces, the
// kept output stays under the cap, every byte is kept, filtered or counted,
// and Keep sees lines of at most MaxLine bytes.
func FuzzLimitedOutput(f *testing.F) {
	f.Add([]byte("a.h:1:1: error: x\n. a.h\ncc1: out of memory allocating 8 bytes\n"), uint16(16), uint8(3))
	f.Add([]byte(strings.Repeat("y", MaxLine+10)+"\nz"), uint16(0), uint8(1))
	f.Add([]byte("\n\n\n"), uint16(1), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, cap16 uint16, piece uint8) {
		var filtered int64
		w := &limitedOutput{lim: Limits{Output: int(cap16), Keep: func(line string) bool {
			if len(line) > MaxLine {
				t.Fatalf("Keep saw a line of %d bytes", len(line))
			}
			if strings.HasPrefix(line, ". ") {
				filtered += int64(len(line)) + 1
				return false
			}
			return true
		}}}
		// Inputs past a few lines of MaxLine add nothing but time (the
		// minimizer spent minutes on megabyte inputs written a byte at a
		// time).
		data = data[:min(len(data), 4*MaxLine+64)]
		step := int(piece) + 1
		for p := data; len(p) > 0; {
			n := min(step, len(p))
			if m, err := w.Write(p[:n]); m != n || err != nil {
				t.Fatalf("Write = %d, %v", m, err)
			}
			p = p[n:]
		}
		w.flush()
		total := int64(len(data))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			total++ // flush ends the last line
		}
		if cap16 > 0 && w.kept.Len() > int(cap16) {
			t.Fatalf("kept %d bytes over a cap of %d", w.kept.Len(), cap16)
		}
		// A filtered line longer than MaxLine is counted at its full size.
		if got := int64(w.kept.Len()) + w.dropped + filtered; got > total || (filtered == 0 && got != total) {
			t.Fatalf("kept %d + dropped %d + filtered %d != %d", w.kept.Len(), w.dropped, filtered, total)
		}
	})
}

// The shell that sets the limits passes the command line through as it
// is: $CC's words, every argument (quotes, spaces, $ and newlines intact),
// then $CFLAGS.
func TestLimitsArgsVerbatim(t *testing.T) {
	driver, log := fakeDriver(t, "")
	t.Setenv("CC", driver+" --lead")
	t.Setenv("CFLAGS", "-O1")
	odd := "-DX=a b\"c'$(touch pwned)\n;`id`"
	dir := t.TempDir()
	if err := RunLimited(t.Context(), dir, Limits{Memory: 1 << 30, CPU: time.Second}, "-c", odd); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--lead\n-c\n" + odd + "\n-O1\n"; string(b) != want {
		t.Errorf("the driver got %q, want %q", b, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("an argument was run as shell code")
	}
}
