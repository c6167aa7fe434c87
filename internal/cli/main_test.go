package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets TestInterruptEndsTheContext run Main in a child process.
func TestMain(m *testing.M) {
	if os.Getenv("NRTABI_CLI_MAIN") == "1" {
		os.Args = []string{"t", "wait"}
		Main(NewApp("t", "a test app", &Command{Name: "wait", Summary: "s", Example: "wait",
			Run: func(ctx context.Context, _ *Command, _ []string, out, _ io.Writer) error {
				fmt.Fprintln(out, "ready")
				select {
				case <-ctx.Done():
					return fmt.Errorf("interrupted: %w", context.Cause(ctx))
				case <-time.After(time.Minute):
					return nil
				}
			}}))
	}
	os.Exit(m.Run())
}

// TestInterruptEndsTheContext: SIGINT ends the one context Main gives the
// command, which returns its error, printed once, exit 1; without the
// handler the process would die of the signal instead.
func TestInterruptEndsTheContext(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "NRTABI_CLI_MAIN=1")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("%v: child said %q, %v", sig, line, err)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != ExitError || !strings.Contains(stderr.String(), "t wait: interrupted: ") {
			t.Errorf("%v: %v, stderr %q; want exit 1 and the command's error", sig, err, stderr.String())
		}
	}
}
