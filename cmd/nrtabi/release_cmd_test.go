package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/fixture"
	"github.com/nrtabi/nrtabi/spec"
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
	// Written outside a checkout: the steps that work there.
	for _, want := range []string{"as libnrt", "as libnccom", "compat-id", "forward-added", "neuronNetGetProperties", "next: nrtabi diff 2.31.24 " + filepath.Join(root, "2.32.0")} {
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

// TestReleaseNewFromSubdirectory (docs/nrtabi-release-new.md): run from a
// subdirectory of a checkout, release new writes spec/NAME at the module
// root (nothing where it runs), and every nrtabi line it prints as "next"
// runs as printed, with the release found by name on disk (as an installed
// binary, which does not embed it, finds it).
func TestReleaseNewFromSubdirectory(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	bins, err := fixture.Build(filepath.Join("..", "..", "generated"), "2.32.0-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bins.Dir)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/nrtabi/nrtabi\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "runtime", "sub")
	build := filepath.Join(root, "build")
	for _, d := range []string{sub, build} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{bins.Libnrt, bins.Libnccom} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(build, filepath.Base(f)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(sub)
	rc, out, errw := runCLI("release", "new", "--name", "2.40.0", "--runtime-version", "2.40.7.0", "--collectives-version", "2.39.1",
		"--binary", bins.Libnrt+","+bins.Libnccom)
	if rc != 0 {
		t.Fatalf("release new: exit %d\n%s", rc, errw)
	}
	// The versions are the ones stated, never the name's; stated, so MED.
	s, err := spec.LoadDir(filepath.Join(root, "spec", "2.40.0"))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Release; r.RuntimeVersion != "2.40.7.0" || r.CollectivesVersion != "2.39.1" || r.ConfOf("runtime_version") != spec.Med {
		t.Errorf("versions %q %q (conf %s)", r.RuntimeVersion, r.CollectivesVersion, r.ConfOf("runtime_version"))
	}
	if _, err := os.Stat(filepath.Join(root, "spec", "2.40.0", "release.toml")); err != nil {
		t.Fatalf("not written to the module root's spec/2.40.0: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(sub); len(entries) != 0 {
		t.Errorf("release new wrote into the working directory: %v", entries)
	}
	var next []string
	for _, l := range strings.Split(out, "\n") {
		if n, ok := strings.CutPrefix(l, "next: "); ok {
			next = append(next, n)
		}
	}
	want := []string{"cd " + root, "make generate RELEASE=2.40.0", "make libnrt libnccom RELEASE=2.40.0",
		"go run -tags nrtabi_release_2_40_0 ./cmd/nrtabi-runtime demo --spec 2.40.0", "nrtabi check --spec 2.40.0 build/*.so*"}
	if strings.Join(next, "\n") != strings.Join(want, "\n") {
		t.Fatalf("next lines:\n%s\nwant:\n%s", strings.Join(next, "\n"), strings.Join(want, "\n"))
	}
	// Run the nrtabi lines as a shell would after the cd: from the root,
	// the glob expanded there.
	t.Chdir(root)
	ran := 0
	for _, l := range next {
		words, ok := strings.CutPrefix(l, "nrtabi ")
		if !ok {
			continue
		}
		var args []string
		for _, w := range strings.Fields(words) {
			if strings.ContainsAny(w, "*?[") {
				m, _ := filepath.Glob(w)
				if len(m) == 0 {
					t.Fatalf("%q: the glob %s matches nothing", l, w)
				}
				args = append(args, m...)
				continue
			}
			args = append(args, w)
		}
		rc, out, errw := runCLI(args...)
		if rc != 0 {
			t.Errorf("%q: exit %d\n%s%s", l, rc, out, errw)
		}
		ran++
	}
	if ran == 0 {
		t.Error("no nrtabi line to run")
	}
	// The same name from a subdirectory, by another command.
	t.Chdir(sub)
	if rc, out, errw := runCLI("diff", "2.31.24", "2.40.0"); rc != 8 || !strings.Contains(out, "compat-id") {
		t.Errorf("diff 2.31.24 2.40.0 from a subdirectory: exit %d\n%s%s", rc, out, errw)
	}
}

// TestReleaseNewWhere: outside a checkout without -o, release new refuses by
// name and writes nothing; a name that is a path is refused before it is one.
func TestReleaseNewWhere(t *testing.T) {
	t.Chdir(t.TempDir())
	rc, _, errw := runCLI("release", "new", "--name", "2.40.0", "--binary", "x.so")
	if rc != 2 || !strings.Contains(errw, "is not inside an nrtabi checkout") || !strings.Contains(errw, "give -o DIR") {
		t.Errorf("outside a checkout: exit %d %s", rc, errw)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("wrote %v", entries)
	}
	if rc, _, errw := runCLI("release", "new", "--name", "2.40.0", "-o", "spec/2.41.0", "--binary", "x.so"); rc != 2 || !strings.Contains(errw, "end it in /2.40.0") {
		t.Errorf("-o naming another release: exit %d %s", rc, errw)
	}
	if rc, _, errw := runCLI("release", "new", "--name", "2.40.0", "-o", "2.40.0", "--runtime-version", "sdk2.40", "--binary", "x.so"); rc != 2 || !strings.Contains(errw, `--runtime-version "sdk2.40"`) {
		t.Errorf("a version that is not one: exit %d %s", rc, errw)
	}
	for _, n := range []string{"../x", "a/b", "..", "x+y", ".hidden"} {
		if rc, _, errw := runCLI("release", "new", "--name", n, "-o", filepath.Join("out", n), "--binary", "x.so"); rc != 2 || !strings.Contains(errw, "--name") {
			t.Errorf("--name %q: exit %d %s", n, rc, errw)
		}
	}
}
