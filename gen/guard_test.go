package gen

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/spec"
)

// goBuild runs go build in the module root with tags ("" for none).
func goBuild(t *testing.T, tags string, pkgs ...string) (string, error) {
	t.Helper()
	args := []string{"build"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(append(args, "-o", "/dev/null"), pkgs...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestReleaseGuard: generated/abi builds for exactly one known release tag;
// no tag, or only the tag of a release that is not generated, stops the
// compiler on an identifier that names the fix; two tags clash (no silent
// fallback: docs/generator.md#building-for-a-release). The exact compiler line is what a user sees, so it is checked
// whole.
func TestReleaseGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: runs go build (-short)")
	}
	none := "generated/abi/zguard.go:17:9: undefined: " + GuardIdent(spec.Default)
	for _, c := range []struct{ tags, want string }{
		{"", none},
		{"nrtabi_release_sdk2_28_0", none},
		{"nrtabi_faults", none},
	} {
		out, err := goBuild(t, c.tags, "./generated/abi")
		if err == nil {
			t.Errorf("-tags %q: generated/abi built", c.tags)
			continue
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || lines[0] != "# "+Module+"/generated/abi" || lines[1] != c.want {
			t.Errorf("-tags %q: compiler said\n%s\nwant\n%s", c.tags, out, c.want)
		}
	}
	for _, r := range spec.Releases() {
		if out, err := goBuild(t, ReleaseTag(r), "./generated/abi"); err != nil {
			t.Errorf("-tags %s: %v\n%s", ReleaseTag(r), err, out)
		}
	}
	// Two release tags: the two releases' names clash, loudly.
	two := ReleaseTag(spec.Default) + "," + ReleaseTag("2.32.0-synthetic")
	if out, err := goBuild(t, two, "./generated/abi"); err == nil || !strings.Contains(out, GuardIdent(spec.Default)+" redeclared in this block") {
		t.Errorf("-tags %s: %v\n%s", two, err, out)
	}
}

// TestGuardNamesDefault: the guard's identifier names the default release's
// tag and the make command, and is a Go identifier.
func TestGuardNamesDefault(t *testing.T) {
	g := GuardIdent(spec.Default)
	for _, want := range []string{ReleaseTag(spec.Default), "make_generate_RELEASE_NAME"} {
		if !strings.Contains(g, want) {
			t.Errorf("%s does not name %s", g, want)
		}
	}
	for _, id := range []string{g} {
		if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(id) {
			t.Errorf("%q is not a Go identifier", id)
		}
	}
}

// TestPureGoWithoutTags: the checking side (cmd/nrtabi and what it links)
// never imports generated/abi, so `go install ./cmd/nrtabi` needs no release
// tag and no C toolchain.
func TestPureGoWithoutTags(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: runs go list (-short)")
	}
	pkgs := []string{"./cmd/nrtabi", "./layoutcheck", "./spec", "./gen", "./release"}
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, Module+"/generated/") {
			t.Errorf("%v import %s: they would need a release tag", pkgs, p)
		}
	}
	// CGO_ENABLED=0 proves "no C toolchain" outright (a package that
	// imports "C" would not build), and is the configuration
	// cmd/nrtabi's tests build the binary in (cmd/nrtabi/cli_test.go), so
	// the two share one set of compiled packages in the build cache.
	build := exec.Command("go", append([]string{"build", "-o", "/dev/null"}, pkgs...)...)
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("go build %v without tags or cgo: %v\n%s", pkgs, err, out)
	}
}

// TestCheckReleaseTags: two releases with one tag, or a tag Go cannot
// parse, are refused before anything is generated.
func TestCheckReleaseTags(t *testing.T) {
	if err := CheckReleaseTags(spec.Releases()); err != nil {
		t.Errorf("the embedded releases: %v", err)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"2.31.24", "2-31-24"}, `releases "2.31.24" and "2-31-24" have the same build tag nrtabi_release_2_31_24`},
		{[]string{"2.31.24+fix"}, `release "2.31.24+fix": its build tag "nrtabi_release_2_31_24+fix" holds "+"`},
	} {
		if err := CheckReleaseTags(c.names); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckReleaseTags(%q) = %v, want %q", c.names, err, c.want)
		}
	}
}
