package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// addressSpaceKB is the ulimit -v every run gets: 2 GiB, less than what
// the decompression bombs and the quadratic spec inputs once took.
const addressSpaceKB = 2097152

// hangLimit is how long a run may take before it counts as hung. It is a
// guard against hangs (a FIFO opened for reading, a scan going round), not a
// speed claim: every run here ends in well under a second.
const hangLimit = 20 * time.Second

// needLimitShell skips a test that runs the binary through runLimited on a
// machine with no sh to set the limit with.
func needLimitShell(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set ulimit -v with")
	}
}

// runLimited runs bin under ulimit -v addressSpaceKB, failing the test if
// it does not end within hangLimit.
func runLimited(t *testing.T, bin string, args []string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", `ulimit -v ` + strconv.Itoa(addressSpaceKB) + ` && exec "$0" "$@"`, bin}, args...)...)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("nrtabi %s did not end within %v", strings.Join(args, " "), hangLimit)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errw.String(), took
}
