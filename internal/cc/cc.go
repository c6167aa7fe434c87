// Package cc runs the real C toolchain (gcc, GNU ld through gcc) for the
// generator's checks, the demo and the tests.
package cc

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// CC is the compiler driver.
var CC = "gcc"

// Error is a failed toolchain run with everything it printed.
type Error struct {
	Args   []string
	Output string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %v\n%s", CC, strings.Join(e.Args, " "), e.Err, strings.TrimRight(e.Output, "\n"))
}

// Run runs the compiler driver in dir.
func Run(dir string, args ...string) error {
	cmd := exec.Command(CC, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return &Error{Args: args, Output: out.String(), Err: err}
	}
	return nil
}

// Strict are the flags generated C must compile cleanly under.
var Strict = []string{"-std=c11", "-Wall", "-Wextra", "-Werror"}

// Object compiles one C file to an object in dir.
func Object(dir, src, obj string, flags ...string) error {
	args := append(append([]string{"-c", "-fPIC", "-g"}, flags...), "-o", obj, src)
	return Run(dir, args...)
}

// Shared links a shared object in dir. soname may be empty.
func Shared(dir, out, soname, versionScript string, inputs []string, flags ...string) error {
	args := []string{"-shared", "-fPIC", "-g", "-o", out}
	if soname != "" {
		args = append(args, "-Wl,-soname,"+soname)
	}
	if versionScript != "" {
		args = append(args, "-Wl,--version-script="+versionScript)
	}
	args = append(args, inputs...)
	return Run(dir, append(args, flags...)...)
}

// Available reports whether the compiler driver can be run.
func Available() error {
	if _, err := exec.LookPath(CC); err != nil {
		return fmt.Errorf("%s not found on PATH (install build-essential)", CC)
	}
	return nil
}

// Output runs the compiler driver and returns what it printed, trimmed.
func Output(args ...string) (string, error) {
	out, err := exec.Command(CC, args...).Output()
	if err != nil {
		return "", &Error{Args: args, Output: string(out), Err: err}
	}
	return strings.TrimSpace(string(out)), nil
}
