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

// fakeCheckout is a directory with this module's go.mod and a copy of the
// embedded releases named, under spec/.
func fakeCheckout(t *testing.T, releases ...string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("// a comment first\nmodule github.com/nrtabi/nrtabi // trailing\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range releases {
		if err := os.MkdirAll(filepath.Join(root, "spec"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(spectest.CopyRelease(t, spec.Embedded, r), filepath.Join(root, "spec", r)); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(root, "runtime", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestLocateCheckout pins step 3 of the order (docs/nrtabi.md#naming-a-spec):
// from any directory of a checkout, a bare name finds the checkout's
// spec/NAME; one identical to the embedded release is read as embedded; one
// that differs shadows it, with a note; a release only the checkout holds
// is found (the case of an installed binary).
func TestLocateCheckout(t *testing.T) {
	root := fakeCheckout(t, "2.31.24", "2.32.0-synthetic")
	t.Chdir(filepath.Join(root, "runtime", "deep"))

	if src, err := Locate("2.31.24"); err != nil || src.Dir != "" || src.Release != "2.31.24" || src.Note != "" {
		t.Errorf("identical checkout release: %+v %v, want the embedded one without a note", src, err)
	}
	// A release only the checkout holds: its directory, by name.
	if err := os.Rename(filepath.Join(root, "spec", "2.32.0-synthetic"), filepath.Join(root, "spec", "2.40.1")); err != nil {
		t.Fatal(err)
	}
	spectest.Replace(t, filepath.Join(root, "spec", "2.40.1"), "release.toml", `name = "2.32.0-synthetic"`, `name = "2.40.1"`)
	want := filepath.Join(root, "spec", "2.40.1")
	src, err := Locate("2.40.1")
	if err != nil || src.Dir != want || src.Release != "2.40.1" || !src.Checkout() || src.Note != "" {
		t.Fatalf("checkout-only release: %+v %v, want dir %s", src, err, want)
	}
	s, where, err := Resolve("2.40.1")
	if err != nil || s.Release.Name != "2.40.1" || where != want {
		t.Errorf("Resolve(2.40.1): %q %v", where, err)
	}
	// An unknown name lists what the checkout adds.
	if _, err := Locate("9.9.9"); err == nil || !strings.Contains(err.Error(), "this checkout's spec/ also holds: 2.40.1") {
		t.Errorf("unknown name in a checkout: %v", err)
	}
	// The parent edited: the child's files are unchanged, but it is no
	// longer the embedded release's chain, so both are read from disk.
	spectest.Replace(t, filepath.Join(root, "spec", "2.31.24"), "release.toml", `reverse_nrt = 4`, `reverse_nrt = 5`)
	src, err = Locate("2.31.24")
	if err != nil || src.Dir != filepath.Join(root, "spec", "2.31.24") || !strings.Contains(src.Note, "differs from the embedded release 2.31.24") {
		t.Fatalf("edited checkout release: %+v %v, want the checkout's with a note", src, err)
	}
	var notes bytes.Buffer
	if _, where, err := ResolveTo("2.31.24", &notes); err == nil || where != src.Dir || !strings.Contains(notes.String(), "note: --spec 2.31.24: using the checkout's") {
		t.Errorf("edited 2.31.24: %q %v, notes %q: want the checkout's (invalid: reverse_nrt) and a note", where, err, notes.String())
	}
}

// TestLocateChainDiffers: a child identical to the embedded one whose
// parent differs in the checkout is read from the checkout, parent and all.
func TestLocateChainDiffers(t *testing.T) {
	root := fakeCheckout(t, "2.31.24", "2.32.0-synthetic")
	t.Chdir(root)
	if src, err := Locate("2.32.0-synthetic"); err != nil || src.Dir != "" {
		t.Fatalf("identical chain: %+v %v", src, err)
	}
	spectest.Replace(t, filepath.Join(root, "spec", "2.31.24"), "release.toml", `build_id = "3415f096d479e7d7bef506bb68bc0fa7551a654a"`, `build_id = "3415f096d479e7d7bef506bb68bc0fa7551a6500"`)
	src, err := Locate("2.32.0-synthetic")
	if err != nil || src.Dir != filepath.Join(root, "spec", "2.32.0-synthetic") || src.Note == "" {
		t.Fatalf("parent edited: %+v %v, want the checkout's child with a note", src, err)
	}
	s, _, err := Resolve("2.32.0-synthetic")
	if err != nil || s.Release.LibNCCOMNet.BuildID != "3415f096d479e7d7bef506bb68bc0fa7551a6500" {
		t.Errorf("the child should inherit the checkout's parent: %v", err)
	}
}

// TestLocateExtraFile: a checkout release with one more file than the
// embedded one is a different release (the file's rows would be lost).
func TestLocateExtraFile(t *testing.T) {
	root := fakeCheckout(t, "2.31.24")
	t.Chdir(root)
	if err := os.WriteFile(filepath.Join(root, "spec", "2.31.24", "zz.toml"), []byte("# more rows\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if src, err := Locate("2.31.24"); err != nil || src.Dir == "" || src.Note == "" {
		t.Errorf("extra file: %+v %v, want the checkout's with a note", src, err)
	}
}

// TestLocateSizeDiffers: a checkout file one byte longer than the embedded
// one, or one byte shorter, is a different release (sameFiles compares the
// sizes before it reads a byte), as is one that is not a regular file.
func TestLocateSizeDiffers(t *testing.T) {
	root := fakeCheckout(t, "2.31.24")
	t.Chdir(root)
	file := filepath.Join(root, "spec", "2.31.24", "release.toml")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		data []byte
	}{{"one byte more", append(append([]byte(nil), orig...), '\n')}, {"one byte less", orig[:len(orig)-1]}} {
		if err := os.WriteFile(file, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if src, err := Locate("2.31.24"); err != nil || src.Dir == "" || src.Note == "" {
			t.Errorf("%s: %+v %v, want the checkout's with a note", c.what, src, err)
		}
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(file, 0o755); err != nil {
		t.Fatal(err)
	}
	if src, err := Locate("2.31.24"); err != nil || src.Dir == "" || src.Note == "" {
		t.Errorf("release.toml a directory: %+v %v, want the checkout's with a note", src, err)
	}
}

// BenchmarkLocate is what step 3 adds to every --spec NAME inside a
// checkout (the comparison with the embedded files), against the same name
// outside one.
func BenchmarkLocate(b *testing.B) {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/nrtabi/nrtabi\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "spec"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(spectest.CopyRelease(b, spec.Embedded, spec.Default), filepath.Join(root, "spec", spec.Default)); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, dir string }{{"checkout", root}, {"outside", b.TempDir()}} {
		b.Run(c.name, func(b *testing.B) {
			b.Chdir(c.dir)
			for b.Loop() {
				if src, err := Locate(spec.Default); err != nil || src.Dir != "" {
					b.Fatal(src, err)
				}
			}
		})
	}
}
