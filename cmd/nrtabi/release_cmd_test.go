package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/fixture"
)

func TestReleaseNewAndBinaryDiff(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	bins, err := fixture.Build(filepath.Join("..", "..", "generated"), "2.32.0-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bins.Dir)
	root := t.TempDir()
	rc, out, errw := runCLI("release", "new", "--spec", "2.31.24", "--name", "2.32.0", "--out", filepath.Join(root, "2.32.0"),
		"--binary", bins.Libnrt, "--binary", bins.Libnccom)
	if rc != 0 {
		t.Fatalf("release new: exit %d\n%s", rc, errw)
	}
	for _, want := range []string{"as libnrt", "as libnccom", "compat-id", "forward-added", "neuronNetGetProperties", "next: make generate RELEASE=2.32.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("release new output lacks %q:\n%s", want, out)
		}
	}
	if rc, out, _ := runCLI("spec", "validate", filepath.Join(root, "2.32.0")); rc != 0 || !strings.Contains(out, "38 forward") {
		t.Errorf("the new release does not validate: exit %d\n%s", rc, out)
	}
	// A second run refuses to overwrite; --force replaces.
	if rc, _, errw := runCLI("release", "new", "--spec", "2.31.24", "--name", "2.32.0", "--out", filepath.Join(root, "2.32.0"), "--binary", bins.Libnccom); rc != 1 || !strings.Contains(errw, "already exists") {
		t.Errorf("overwrite: exit %d %s", rc, errw)
	}
	// diff with a binary side: the synthetic release against its own binaries
	// shows no boundary change.
	rc, out, errw = runCLI("diff", "2.32.0-synthetic", bins.Libnrt+","+bins.Libnccom)
	if rc != 0 || !strings.Contains(out, "0 incompatible, 0 compatible") {
		t.Errorf("diff against binaries: exit %d\n%s%s", rc, out, errw)
	}
	rc, out, _ = runCLI("diff", "2.31.24", bins.Libnrt+","+bins.Libnccom)
	if rc != 8 || !strings.Contains(out, "compat-id") {
		t.Errorf("diff 2.31.24 against synthetic binaries: exit %d\n%s", rc, out)
	}
	if rc, _, _ := runCLI("release", "new", "--name", "x"); rc != 2 {
		t.Errorf("no binaries: exit %d, want 2", rc)
	}
	junk := filepath.Join(t.TempDir(), "libjunk.so")
	os.WriteFile(junk, []byte("\x7fELF truncated"), 0o644)
	if rc, _, errw := runCLI("release", "new", "--name", "y", "--out", filepath.Join(root, "y"), "--binary", junk); rc != 1 || !strings.Contains(errw, "libjunk.so") {
		t.Errorf("junk binary: exit %d %s", rc, errw)
	}
	if _, err := os.Stat(filepath.Join(root, "y")); err == nil {
		t.Error("a failed release new left a directory behind")
	}
}
