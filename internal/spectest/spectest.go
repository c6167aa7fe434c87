// Package spectest puts a copy of a release's spec files on disk for tests
// that break one fact. It takes the files as an fs.FS, not from package
// spec, so that spec's own tests can use it too.
package spectest

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"
)

// CopyRelease writes release's *.toml files from fsys (spec.Embedded) into a
// temporary directory named after the release, and returns that directory.
func CopyRelease(t testing.TB, fsys fs.FS, release string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), release)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(fsys, release)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(release, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Replace changes the first occurrence of old in dir/file; the test fails
// if there is none.
func Replace(t testing.TB, dir, file, old, repl string) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s lacks %q", file, old)
	}
	if err := os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(repl), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}
