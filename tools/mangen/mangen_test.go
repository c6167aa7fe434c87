package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPages: every command page of docs/ becomes NAME.1 with a .TH line,
// its links to other command pages NAME(1); a rerun writes the same bytes
// (no date in the page). In process, a few milliseconds.
func TestPages(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	first, err := run("../../docs", a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run("../../docs", b); err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob("../../docs/nrtabi*.md")
	if len(first) != len(pages) {
		t.Errorf("%d man pages for %d command pages", len(first), len(pages))
	}
	for _, p := range first {
		x, _ := os.ReadFile(p)
		y, _ := os.ReadFile(filepath.Join(b, filepath.Base(p)))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", filepath.Base(p))
		}
		if !bytes.Contains(x, []byte(".TH "+strings.ToUpper(strings.TrimSuffix(filepath.Base(p), ".1"))+" 1 ")) {
			t.Errorf("%s has no .TH of its name:\n%.300s", p, x)
		}
		if bytes.Contains(x, []byte(".md")) && bytes.Contains(x, []byte("](")) {
			t.Errorf("%s keeps a Markdown link", p)
		}
	}
	check, _ := os.ReadFile(filepath.Join(a, "nrtabi-check.1"))
	if !bytes.Contains(check, []byte("nrtabi-diff(1)")) {
		t.Errorf("nrtabi-check.1 does not refer to nrtabi-diff(1)")
	}
	if _, err := run(t.TempDir(), a); err == nil || !strings.Contains(err.Error(), "no command page") {
		t.Errorf("a directory without command pages: %v", err)
	}
}

// TestMakeInstall is the acceptance test of `make install`
// (docs/make.md#install): into a fresh DESTDIR, both binaries run, every
// man page renders with man -l at 80 columns, the bash completion
// registers, and the zsh and fish scripts parse where those shells exist.
// Cost: the two go builds (cached after the first run of the tree's other
// tests; about a minute cold on two cores) and sixteen man renders.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short: make install builds both binaries")
	}
	for _, tool := range []string{"make", "man", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: no %s (apt-get install make man-db bash)", tool)
		}
	}
	dest := t.TempDir()
	out, err := exec.Command("make", "-C", "../..", "install", "DESTDIR="+dest, "PREFIX=/usr").CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	root := filepath.Join(dest, "usr")
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"), "MANWIDTH=80")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s %q: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	if v := sh(filepath.Join(root, "bin", "nrtabi-runtime"), "version"); !strings.Contains(v, "built for release ") {
		t.Errorf("nrtabi-runtime version names no release:\n%s", v)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "share/man/man1/*.1"))
	if len(pages) < 16 {
		t.Errorf("%d man pages installed", len(pages))
	}
	for _, p := range pages {
		cmd := exec.Command("man", "-l", p)
		cmd.Env = append(os.Environ(), "MANWIDTH=80")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		text, err := cmd.Output()
		// groff warns of a table wider than the line; anything else on
		// stderr is an error of the page.
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if l != "" && !strings.Contains(l, "table wider than line width") && !strings.HasPrefix(l, "warning: file '<standard input>'") {
				t.Errorf("man -l %s: %s", filepath.Base(p), l)
			}
		}
		if err != nil || !bytes.Contains(text, []byte("NAME")) {
			t.Errorf("man -l %s: %v\n%.200s", filepath.Base(p), err, text)
		}
	}
	for _, b := range []string{"nrtabi", "nrtabi-runtime"} {
		out := sh("bash", "-c", `source "$1" && complete -p "$2"`, "bash", filepath.Join(root, "share/bash-completion/completions", b), b)
		if !strings.Contains(out, "-F _"+strings.ReplaceAll(b, "-", "_")+"_complete "+b) {
			t.Errorf("bash completion of %s not registered: %s", b, out)
		}
		for shell, file := range map[string]string{"zsh": "share/zsh/site-functions/_" + b, "fish": "share/fish/vendor_completions.d/" + b + ".fish"} {
			if _, err := exec.LookPath(shell); err != nil {
				t.Logf("not checking the %s script: no %s (apt-get install %s)", shell, shell, shell)
				continue
			}
			sh(shell, "-n", filepath.Join(root, file))
		}
	}
	// uninstall removes every file install wrote.
	if out, err := exec.Command("make", "-C", "../..", "uninstall", "DESTDIR="+dest, "PREFIX=/usr").CombinedOutput(); err != nil {
		t.Fatalf("make uninstall: %v\n%s", err, out)
	}
	var left []string
	filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("make uninstall left %v", left)
	}
}
