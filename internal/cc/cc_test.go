package cc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDriver is a compiler driver that writes its arguments, one a line,
// to the file $NRTABI_CC_LOG and prints "fake".
func fakeDriver(t *testing.T, body string) (driver, log string) {
	t.Helper()
	dir := t.TempDir()
	driver, log = filepath.Join(dir, "fakecc"), filepath.Join(dir, "args")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >\"$NRTABI_CC_LOG\"\n" + body + "echo fake\n"
	if err := os.WriteFile(driver, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NRTABI_CC_LOG", log)
	return driver, log
}

func loggedArgs(t *testing.T, log string) string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the driver did not run: %v", err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// Every entry point runs $CC (with its leading words) and puts $CFLAGS
// last on the command line.
func TestEnvironment(t *testing.T) {
	driver, log := fakeDriver(t, "")
	t.Setenv("CC", driver+" --lead")
	t.Setenv("CFLAGS", " -DFROM_CFLAGS   -O1 ")
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"Run", func() error { return Run(dir, "-c", "a.c") }, "--lead -c a.c -DFROM_CFLAGS -O1"},
		{"Object", func() error { return Object(dir, "a.c", "a.o", "-Wall") }, "--lead -c -fPIC -g -Wall -o a.o a.c -DFROM_CFLAGS -O1"},
		{"Shared", func() error { return Shared(dir, "liba.so", "liba.so.1", "", []string{"a.o"}) },
			"--lead -shared -fPIC -g -o liba.so -Wl,-soname,liba.so.1 a.o -DFROM_CFLAGS -O1"},
		{"Output", func() error {
			out, err := Output("-print-file-name=libasan.so")
			if err == nil && out != "fake" {
				t.Errorf("Output = %q, want the driver's stdout", out)
			}
			return err
		}, "--lead -print-file-name=libasan.so -DFROM_CFLAGS -O1"},
		{"Command", func() error { return Command(t.Context(), dir, "-v").Run() }, "--lead -v -DFROM_CFLAGS -O1"},
	} {
		os.Remove(log)
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := loggedArgs(t, log); got != c.want {
			t.Errorf("%s ran the driver with %q, want %q", c.name, got, c.want)
		}
	}
	if err := Available(); err != nil {
		t.Errorf("Available with CC=%s: %v", driver, err)
	}
	t.Setenv("CC", filepath.Join(dir, "no-such-cc"))
	if err := Available(); err == nil || !strings.Contains(err.Error(), "no-such-cc") {
		t.Errorf("Available with a missing $CC: %v, want an error naming it", err)
	}
	t.Setenv("CC", "  ")
	if d := Driver(); len(d) != 1 || d[0] != CC {
		t.Errorf("a blank $CC gives driver %q, want %q", d, CC)
	}
}

// A failed run names the driver and the whole command line and keeps what
// it printed.
func TestError(t *testing.T) {
	driver, _ := fakeDriver(t, "echo 'a.c:1: error: no' >&2\nexit 1\n")
	t.Setenv("CC", driver)
	t.Setenv("CFLAGS", "-O3")
	err := Run(t.TempDir(), "-c", "a.c")
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), driver+" -c a.c -O3: exit status 1") || !strings.Contains(e.Output, "a.c:1: error: no") {
		t.Fatalf("got %v", err)
	}
}

// A deadline ends the run, the driver's own children included: the
// grandchild here holds the output pipe, so only a kill of the whole
// process group returns before proc.WaitDelay.
func TestDeadline(t *testing.T) {
	driver, _ := fakeDriver(t, "sleep 30 &\nwait\n")
	t.Setenv("CC", driver)
	t.Setenv("CFLAGS", "")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := RunContext(ctx, t.TempDir(), "-c", "a.c")
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the run took %s after a 200ms deadline", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want an error wrapping context.DeadlineExceeded", err)
	}
}
