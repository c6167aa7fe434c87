package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
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
		{[]string{"build", "nccom-stubs", "--bogus"}, cli.ExitUsage, `unknown flag "--bogus"`},
		{[]string{"build", "libnrt", "--variant", "sideways", "--out", t.TempDir()}, cli.ExitError, `unknown link variant "sideways"`},
		// Only embedded releases have a generated tree to build from.
		{[]string{"build", "libnrt", "--spec", t.TempDir()}, cli.ExitUsage, "a spec directory has no generated tree"},
		{[]string{"demo", "--spec", "9.9.9"}, cli.ExitUsage, "the embedded releases are: 2.20.0-synthetic, 2.31.24"},
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

// fakeCheckout is a module checkout in a temporary directory whose spec/
// holds release name, a copy of the default release renamed, with nothing
// generated for it; the working directory moves there for the test.
func fakeCheckout(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+builder.Module+"\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "..", "spec", spec.Default)
	dst := filepath.Join(root, "spec", name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "release.toml" {
			b = bytes.Replace(b, []byte(`name = "`+spec.Default+`"`), []byte(`name = "`+name+`"`), 1)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)
	return root
}

// TestRefuseUngenerated: build and demo for a release the checkout holds but
// has not generated are refused with the one command that generates it,
// before anything is built (no silent fallback to 2.31.24).
func TestRefuseUngenerated(t *testing.T) {
	fakeCheckout(t, "sdk2.28.0")
	want := "release sdk2.28.0 is not generated (no generated/sdk2.28.0/c/nrtabi.h): run make generate RELEASE=sdk2.28.0"
	for _, args := range [][]string{
		{"build", "libnrt", "--spec", "sdk2.28.0", "--out", t.TempDir()},
		{"build", "libnccom", "--spec", "sdk2.28.0", "--libnrt", t.TempDir(), "--out", t.TempDir()},
		{"demo", "--spec", "sdk2.28.0"},
	} {
		if args[0] == "build" && args[1] == "libnccom" {
			// libnccom wants a libnrt.so.1 first; give it one so the release is what is refused.
			if err := os.WriteFile(filepath.Join(args[5], builder.LibnrtFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var out, errw bytes.Buffer
		code := run(args, &out, &errw)
		msg := strings.TrimSpace(errw.String())
		if code != cli.ExitError || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, ": "+want) {
			t.Errorf("nrtabi-runtime %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, errw.String(), cli.ExitError, want)
		}
		if out.Len() != 0 {
			t.Errorf("nrtabi-runtime %s printed %q before refusing", strings.Join(args, " "), out.String())
		}
	}
}

// TestDemoRefusesOtherRelease: a demo of a release this binary was not
// compiled for is refused, naming both releases and the command that runs
// it, before any step: it would run its Go steps on one layout and its C
// steps on another.
func TestDemoRefusesOtherRelease(t *testing.T) {
	other := "2.32.0-synthetic"
	if abi.Release == other {
		other = spec.Default
	}
	var out, errw bytes.Buffer
	code := run([]string{"demo", "--spec", other}, &out, &errw)
	want := "nrtabi-runtime demo: this nrtabi-runtime was built for release " + abi.Release + " (-tags " + abi.BuildTag + "), not " + other +
		": run go run -tags " + gen.ReleaseTag(other) + " ./cmd/nrtabi-runtime demo --spec " + other + " (or make demo RELEASE=" + other + ")\n"
	if code != cli.ExitError || errw.String() != want || out.Len() != 0 {
		t.Errorf("demo --spec %s: exit %d, stdout %q, stderr %q; want exit %d and %q", other, code, out.String(), errw.String(), cli.ExitError, want)
	}
}
