package builder

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
)

// TestCheckGenerated: every embedded release is generated in this checkout;
// a release missing its header or its selector file is a *NotGenerated
// naming the file and the one command; a bad name is refused as such.
func TestCheckGenerated(t *testing.T) {
	tr := open(t)
	for _, r := range spec.Releases() {
		if err := CheckGenerated(tr.Root, r); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	err := CheckGenerated(tr.Root, "sdk2.28.0")
	var ng *NotGenerated
	want := "release sdk2.28.0 is not generated (no generated/sdk2.28.0/c/nrtabi.h): run make generate RELEASE=sdk2.28.0"
	if !errors.As(err, &ng) || err.Error() != want {
		t.Errorf("CheckGenerated(sdk2.28.0) = %v, want %q", err, want)
	}
	// The header alone is not enough: the selector must have the release too.
	root := t.TempDir()
	hdr := filepath.Join(root, "generated", "x1", "c", gen.HeaderName)
	if err := os.MkdirAll(filepath.Dir(hdr), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hdr, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckGenerated(root, "x1"); err == nil || !strings.Contains(err.Error(), "(no generated/abi/zselect_x1.go): run make generate RELEASE=x1") {
		t.Errorf("a release without its selector file: %v", err)
	}
	// A directory where the selector file belongs is not a file.
	if err := os.MkdirAll(filepath.Join(root, "generated", "abi", "zselect_x1.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckGenerated(root, "x1"); err == nil {
		t.Error("a directory counted as the selector file")
	}
	for _, bad := range []string{"", "../2.31.24", "a b", "-x"} {
		if err := CheckGenerated(tr.Root, bad); err == nil || errors.As(err, &ng) {
			t.Errorf("CheckGenerated(%q) = %v, want a bad-name error", bad, err)
		}
	}
	if _, err := Open("sdk2.28.0"); err == nil || !strings.Contains(err.Error(), "run make generate RELEASE=sdk2.28.0") {
		t.Errorf("Open of an ungenerated release: %v", err)
	}
}

// TestMakeRefusesUngenerated: the make targets that build or run a release
// refuse one that is not generated, with the one command, before running
// anything (nothing is printed on stdout, no go command runs).
func TestMakeRefusesUngenerated(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("skipping: no make on PATH")
	}
	tr := open(t)
	for _, target := range []string{"libnrt", "libnccom", "nccom-stubs", "demo"} {
		cmd := exec.Command("make", "-s", target, "RELEASE=sdk2.28.0")
		cmd.Dir = tr.Root
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || stdout.Len() != 0 ||
			!strings.HasPrefix(stderr.String(), "release sdk2.28.0 is not generated: run make generate RELEASE=sdk2.28.0\n") {
			t.Errorf("make %s RELEASE=sdk2.28.0: %v, stdout %q, stderr %q", target, err, stdout.String(), stderr.String())
		}
	}
}

// releaseObject compiles a shared object exporting the release symbol as
// libnrt's generated file defines it.
func releaseObject(t testing.TB, name string) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "r.c")
	if err := os.WriteFile(src, []byte("const char "+gen.LibnrtReleaseSymbol+"[] = \""+name+"\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "libr.so")
	if err := cc.Run(dir, "-shared", "-fPIC", "-o", out, src); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLibnrtRelease: the name is read from the data symbol; a file without
// it, a non-ELF file, a directory and a name that is no release name are
// refused by name. The check of a library for another release names both.
func TestLibnrtRelease(t *testing.T) {
	so := releaseObject(t, "2.32.0-synthetic")
	if got, err := LibnrtRelease(so); err != nil || got != "2.32.0-synthetic" {
		t.Errorf("LibnrtRelease = %q, %v", got, err)
	}
	err := CheckLibnrtRelease(so, "2.31.24")
	var wr *WrongRelease
	if !errors.As(err, &wr) || err.Error() != so+" was built for release 2.32.0-synthetic, not 2.31.24: rebuild it with make libnrt RELEASE=2.31.24" {
		t.Errorf("CheckLibnrtRelease against another release: %v", err)
	}
	if err := CheckLibnrtRelease(so, "2.32.0-synthetic"); err != nil {
		t.Error(err)
	}
	bad := releaseObject(t, `a\033[31mb`)
	if _, err := LibnrtRelease(bad); err == nil || strings.ContainsRune(err.Error(), 033) {
		t.Errorf("a name with an escape sequence: %v", err)
	}
	text := filepath.Join(t.TempDir(), "not-elf")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{text, t.TempDir(), filepath.Join(t.TempDir(), "none")} {
		if _, err := LibnrtRelease(p); err == nil {
			t.Errorf("LibnrtRelease(%s): no error", p)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LibnrtRelease(self); err == nil || !strings.Contains(err.Error(), "exports no nrtabi_release_name") {
		t.Errorf("an ELF file without the symbol: %v", err)
	}
}

// FuzzLibnrtRelease: whatever the bytes, LibnrtRelease returns an error or a
// valid release name; it never panics.
func FuzzLibnrtRelease(f *testing.F) {
	seed, err := os.ReadFile(releaseObject(f, "2.31.24"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		name, err := releaseFrom("fuzz", bytes.NewReader(b))
		if err == nil && spec.FileNameProblem(name) != "" {
			t.Errorf("LibnrtRelease accepted %q", name)
		}
	})
}
