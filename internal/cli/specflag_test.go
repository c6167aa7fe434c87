package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

// TestLocateOrder pins the documented order of --spec NAME|DIR: a path is a
// directory; an existing directory wins over an embedded release of the
// same name; else an embedded release; else an error listing the releases.
func TestLocateOrder(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	disk := spectest.CopyRelease(t, spec.Embedded, spec.Default)
	if err := os.Rename(disk, filepath.Join(work, "2.31.24")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "file.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value, dir, release, err string
	}{
		{value: "2.32.0-synthetic", release: "2.32.0-synthetic"},
		{value: "2.31.24", dir: "2.31.24"}, // the directory here shadows the embedded release
		{value: "./2.31.24", dir: "./2.31.24"},
		{value: filepath.Join(work, "2.31.24"), dir: filepath.Join(work, "2.31.24")},
		{value: "./2.32.0-synthetic", err: "spec ./2.32.0-synthetic: no such directory (embedded releases: 2.20.0-synthetic, 2.31.24, 2.32.0-synthetic)"},
		{value: "./file.toml", err: "not a directory"},
		{value: "9.9.9", err: `spec "9.9.9": neither a directory nor an embedded release; the embedded releases are: 2.20.0-synthetic, 2.31.24, 2.32.0-synthetic`},
		{value: "", err: "no spec named"},
	} {
		src, err := Locate(c.value)
		if c.err != "" {
			var ne *NameError
			if err == nil || !errors.As(err, &ne) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %+v %v, want a NameError with %q", c.value, src, err, c.err)
			}
			continue
		}
		if err != nil || src.Dir != c.dir || src.Release != c.release {
			t.Errorf("%q: %+v %v, want dir %q release %q", c.value, src, err, c.dir, c.release)
		}
	}
	// Resolve reads what Locate found: here, the directory.
	if s, where, err := Resolve("2.31.24"); err != nil || s.Release.Name != spec.Default || where != "2.31.24" {
		t.Errorf("Resolve(2.31.24) here: %q %v", where, err)
	}
	s, where, err := ResolveTOML("2.32.0-synthetic")
	if err != nil || s.Release.Name != "2.32.0-synthetic" || where != "spec/2.32.0-synthetic (embedded)" {
		t.Errorf("ResolveTOML: %q %v", where, err)
	}
}

func TestListFlag(t *testing.T) {
	var l ListFlag
	for _, v := range []string{"a,b", " c ", ",,d,"} {
		if err := l.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if l.String() != "a,b,c,d" {
		t.Errorf("%q", l.String())
	}
}
