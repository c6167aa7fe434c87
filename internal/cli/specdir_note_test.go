package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

// TestLocateDirNamedAsRelease: a bare name that is both a directory of the
// working directory and a release reads the directory (step 2 of
// docs/nrtabi.md#naming-a-spec) with one note naming it; a directory with
// no release's name, or named with a path, has none; from a checkout's
// spec/ the name is the checkout's release, no stray directory.
func TestLocateDirNamedAsRelease(t *testing.T) {
	wd := t.TempDir()
	if err := os.Rename(spectest.CopyRelease(t, spec.Embedded, spec.Default), filepath.Join(wd, spec.Default)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(spectest.CopyRelease(t, spec.Embedded, spec.Default), filepath.Join(wd, "frag")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	var notes bytes.Buffer
	_, where, err := ResolveTo(spec.Default, &notes)
	abs := filepath.Join(wd, spec.Default)
	if err != nil || where != spec.Default || strings.Count(notes.String(), "note: ") != 1 || !strings.Contains(notes.String(), "reading the directory "+abs) {
		t.Errorf("--spec %s beside ./%s: where %q, %v, notes %q; want the directory and one note naming it", spec.Default, spec.Default, where, err, notes.String())
	}
	for _, v := range []string{"frag", "./" + spec.Default} {
		if src, err := Locate(v); err != nil || src.Note != "" || src.Dir != v {
			t.Errorf("--spec %s: %+v %v, want the directory without a note", v, src, err)
		}
	}
	root := fakeCheckout(t, spec.Default)
	t.Chdir(filepath.Join(root, "spec"))
	if src, err := Locate(spec.Default); err != nil || src.Note != "" || src.Release != spec.Default {
		t.Errorf("from the checkout's spec/: %+v %v, want the release without a note", src, err)
	}
}
