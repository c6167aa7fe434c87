package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cli"
)

// Bad invocations of the build commands fail fast with one clear line; the
// builds themselves are exercised by runtime/e2e and the demo.
func TestBuildCommandErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"build", "nccom-stubs", "--libnrt", missing}, cli.ExitError, missing + "/libnrt.so.1: stat"},
		{[]string{"build", "nccom-stubs", "--libnrt", missing}, cli.ExitError, "(build it first: make libnrt, or --libnrt DIR)"},
		{[]string{"build", "libnrt", "extra"}, cli.ExitUsage, `unexpected argument "extra"`},
		{[]string{"build", "nccom-stubs", "--bogus"}, cli.ExitUsage, "flag provided but not defined"},
		{[]string{"build", "libnrt", "--variant", "sideways", "--out", t.TempDir()}, cli.ExitError, `unknown link variant "sideways"`},
		// Only embedded releases have a generated tree to build from.
		{[]string{"build", "libnrt", "--spec", t.TempDir()}, cli.ExitUsage, "a spec directory has no generated tree"},
		{[]string{"demo", "--spec", "9.9.9"}, cli.ExitUsage, "the embedded releases are: 2.31.24"},
		{[]string{"demo", "stray"}, cli.ExitUsage, `unexpected argument "stray"`},
	} {
		var out, errw bytes.Buffer
		code := run(c.args, &out, &errw)
		if code != c.code || !strings.Contains(errw.String(), c.want) {
			t.Errorf("nrtabi-runtime %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errw.String(), c.code, c.want)
		}
		if c.code == cli.ExitError && strings.Count(strings.TrimSpace(errw.String()), "\n") != 0 {
			t.Errorf("nrtabi-runtime %s: the error is not one line: %q", strings.Join(c.args, " "), errw.String())
		}
	}
}
