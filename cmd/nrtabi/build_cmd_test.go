package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
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
		{[]string{"build", "nccom-stubs", "--libnrt", missing}, exitError, missing + "/libnrt.so.1: stat"},
		{[]string{"build", "nccom-stubs", "--libnrt", missing}, exitError, "(build it first: make libnrt, or --libnrt DIR)"},
		{[]string{"build", "libnrt", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"build", "nccom-stubs", "--bogus"}, exitUsage, "flag provided but not defined"},
		{[]string{"build", "libnrt", "--variant", "sideways", "--out", t.TempDir()}, exitError, `unknown link variant "sideways"`},
	} {
		var out, errw bytes.Buffer
		code := run(c.args, &out, &errw)
		if code != c.code || !strings.Contains(errw.String(), c.want) {
			t.Errorf("nrtabi %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errw.String(), c.code, c.want)
		}
		if c.code == exitError && strings.Count(strings.TrimSpace(errw.String()), "\n") != 0 {
			t.Errorf("nrtabi %s: the error is not one line: %q", strings.Join(c.args, " "), errw.String())
		}
	}
}
