package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// truncateChildEnv makes the test binary the child of
// TestInputTruncatedWhileMapped: it truncates the named file as soon as
// nrtabi has opened it (and sized its mapping) and runs the command after
// "--" in its arguments.
const truncateChildEnv = "NRTABI_TEST_TRUNCATE_ON_OPEN"

// TestInputTruncatedWhileMapped: an input truncated by another process while
// nrtabi reads it (here: right after the open, through regfile's test hook,
// so the mapping is the old size and every page past the new end raises
// SIGBUS) ends in one line naming the file and exit 1, for every command
// that maps its input; no "fatal error: fault", no goroutine dump.
func TestInputTruncatedWhileMapped(t *testing.T) {
	if path := os.Getenv(truncateChildEnv); path != "" {
		truncateChild(path)
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"show", "no_such_struct"},
		{"check"},
		{"extract", "--struct", "no_such_struct"},
	} {
		t.Run(args[0], func(t *testing.T) {
			// The test binary is an ELF file of many pages whose section
			// headers are at its end: every command reads past 4096 bytes.
			obj := filepath.Join(t.TempDir(), "victim.so")
			copyFile(t, self, obj)
			cmd := exec.Command(self, append([]string{"-test.run=^TestInputTruncatedWhileMapped$", "--"}, append(args, obj)...)...)
			cmd.Env = append(os.Environ(), truncateChildEnv+"="+obj)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("want exit 1, got %v", err)
			}
			msg := stderr.String()
			if strings.Contains(msg, "fatal error") || strings.Contains(msg, "goroutine ") || strings.Count(msg, "\n") != 1 {
				t.Fatalf("want one line, got %d lines:\n%.2000s", strings.Count(msg, "\n"), msg)
			}
			if !strings.Contains(msg, obj+": changed while it was being read") {
				t.Errorf("the line does not name the file and what happened: %q", msg)
			}
		})
	}
}

func truncateChild(path string) {
	regfile.TestHookOpened = func(p string) {
		// The open that maps the file, not an earlier look at its first
		// bytes (inputs' expansion reads them to recognise a package).
		if p == path && openedBy("elfread.Open") {
			regfile.TestHookOpened = nil
			if err := os.Truncate(p, 4096); err != nil {
				panic(err)
			}
		}
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args, io.Discard, os.Stderr))
}

// openedBy reports whether fn is on the stack of the open being hooked.
func openedBy(fn string) bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
