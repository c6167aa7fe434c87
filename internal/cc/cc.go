// Package cc is the one way nrtabi runs the C toolchain (the compiler
// driver, GNU ld through it), for the generator's checks, the builder, the
// demo, the tests and the benches alike. The driver is $CC (default gcc;
// it may carry leading words, as in CC="ccache gcc"), and $CFLAGS is
// appended to every command line it runs, so a user's flags come last and
// win. Both are split on white space, without shell quoting. The
// environment is read at each call.
package cc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/nrtabi/nrtabi/internal/proc"
)

// CC is the compiler driver when $CC is unset or blank.
var CC = "gcc"

// Driver is the compiler driver's words: $CC's, else CC.
func Driver() []string {
	if d := strings.Fields(os.Getenv("CC")); len(d) > 0 {
		return d
	}
	return []string{CC}
}

// Flags is $CFLAGS's words.
func Flags() []string { return strings.Fields(os.Getenv("CFLAGS")) }

// Error is a failed toolchain run with everything it printed.
type Error struct {
	Driver []string // the driver's words
	Args   []string // the arguments after them, $CFLAGS included
	Output string
	// Dropped is how many bytes of output a RunLimited did not keep
	// (Limits.Output).
	Dropped int64
	// Exceeded is the limit a RunLimited ran out of (ExceededMemory,
	// ExceededCPU), as the driver's children reported it; "" when none.
	Exceeded string
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %v\n%s%s", strings.Join(e.Driver, " "), strings.Join(e.Args, " "), e.Err, strings.TrimRight(e.Output, "\n"), e.droppedNote())
}

func (e *Error) Unwrap() error { return e.Err }

// Command is the driver run with args and then $CFLAGS in dir ("": the
// working directory), killed with its process group when ctx ends
// (internal/proc). For callers that need the *exec.Cmd itself (their own
// output, timing, environment); Run and the others cover the rest.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	return command(ctx, Driver(), dir, args)
}

func command(ctx context.Context, d []string, dir string, args []string) *exec.Cmd {
	w := commandLine(d, args)
	cmd := proc.Command(ctx, w[0], w[1:]...)
	cmd.Dir = dir
	return cmd
}

// commandLine is the driver's words, args, then $CFLAGS: what every run of
// the driver executes, limited or not.
func commandLine(d, args []string) []string {
	return append(append(d[:len(d):len(d)], args...), Flags()...)
}

// Run runs the compiler driver in dir.
func Run(dir string, args ...string) error { return RunContext(context.Background(), dir, args...) }

// RunContext is Run ended by ctx.
func RunContext(ctx context.Context, dir string, args ...string) error {
	d := Driver()
	cmd := command(ctx, d, dir, args)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return &Error{Driver: d, Args: cmd.Args[len(d):], Output: out.String(), Err: proc.Err(ctx, err)}
	}
	return nil
}

// Strict are the flags generated C must compile cleanly under.
var Strict = []string{"-std=c11", "-Wall", "-Wextra", "-Werror"}

// Object compiles one C file to an object in dir.
func Object(dir, src, obj string, flags ...string) error {
	return ObjectContext(context.Background(), dir, src, obj, flags...)
}

// ObjectContext is Object ended by ctx.
func ObjectContext(ctx context.Context, dir, src, obj string, flags ...string) error {
	return RunContext(ctx, dir, objectArgs(src, obj, flags)...)
}

// objectArgs compile src to obj, position-independent and with DWARF.
func objectArgs(src, obj string, flags []string) []string {
	return append(append([]string{"-c", "-fPIC", "-g"}, flags...), "-o", obj, src)
}

// Shared links a shared object in dir. soname may be empty.
func Shared(dir, out, soname, versionScript string, inputs []string, flags ...string) error {
	return SharedContext(context.Background(), dir, out, soname, versionScript, inputs, flags...)
}

// SharedContext is Shared ended by ctx.
func SharedContext(ctx context.Context, dir, out, soname, versionScript string, inputs []string, flags ...string) error {
	args := []string{"-shared", "-fPIC", "-g", "-o", out}
	if soname != "" {
		args = append(args, "-Wl,-soname,"+soname)
	}
	if versionScript != "" {
		args = append(args, "-Wl,--version-script="+versionScript)
	}
	args = append(args, inputs...)
	return RunContext(ctx, dir, append(args, flags...)...)
}

// Available reports whether the compiler driver can be run.
func Available() error {
	d := Driver()
	if _, err := exec.LookPath(d[0]); err != nil {
		return fmt.Errorf("the C compiler driver %q ($CC, default %s) is not on PATH (install build-essential, or set CC): %w", d[0], CC, err)
	}
	return nil
}

// Output runs the compiler driver (a query such as -print-file-name) and
// returns what it printed on stdout, trimmed.
func Output(args ...string) (string, error) { return OutputContext(context.Background(), args...) }

// OutputContext is Output ended by ctx.
func OutputContext(ctx context.Context, args ...string) (string, error) {
	d := Driver()
	cmd := command(ctx, d, "", args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", &Error{Driver: d, Args: cmd.Args[len(d):], Output: string(out) + stderr.String(), Err: proc.Err(ctx, err)}
	}
	return strings.TrimSpace(string(out)), nil
}
