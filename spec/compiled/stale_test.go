package compiled

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/nrtabi/nrtabi/spec"
)

// TestStaleCompiledIgnored: a compiled release is used only while every
// embedded file it was read from is unchanged — its own and its parent's —
// and no file was added to or removed from those directories.
func TestStaleCompiledIgnored(t *testing.T) {
	c := compiledOf(t, "2.32.0-synthetic")
	fresh := func() fstest.MapFS {
		m := fstest.MapFS{}
		_ = fs.WalkDir(spec.Embedded, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := fs.ReadFile(spec.Embedded, p)
				m[p] = &fstest.MapFile{Data: data}
			}
			return nil
		})
		return m
	}
	if !c.currentIn(fresh()) {
		t.Fatal("an unchanged copy of the embedded files is taken for stale")
	}
	edits := map[string]func(fstest.MapFS){
		"own file edited": func(m fstest.MapFS) {
			f := m["2.32.0-synthetic/structs.toml"]
			f.Data = append([]byte(nil), f.Data...)
			f.Data[len(f.Data)/2] ^= 1
		},
		"parent file edited": func(m fstest.MapFS) {
			f := m["2.31.24/forward.toml"]
			f.Data = append(append([]byte(nil), f.Data...), '\n')
		},
		"file added":   func(m fstest.MapFS) { m["2.31.24/zz.toml"] = &fstest.MapFile{Data: []byte("# new\n")} },
		"file removed": func(m fstest.MapFS) { delete(m, "2.32.0-synthetic/constants.toml") },
	}
	for name, edit := range edits {
		m := fresh()
		edit(m)
		if c.currentIn(m) {
			t.Errorf("%s: the compiled release is still taken for current", name)
		}
		// A release compiled from these sums but not yet loaded: the load
		// must refuse it (the caller then reads the TOML).
		stale := &release{name: c.name, spec: c.spec, link: func() { t.Error("a stale release was linked") }, sums: c.sums}
		if stale.load(m) != nil {
			t.Errorf("%s: a stale compiled release was used", name)
		}
	}
}

func compiledOf(t *testing.T, name string) *release {
	t.Helper()
	for _, c := range releases {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("release %s is not compiled: run 'make generate'", name)
	return nil
}

// TestCompiledLoadAllocs: loading a compiled release builds nothing — one
// copy of the top Spec, whatever the size of the release.
func TestCompiledLoadAllocs(t *testing.T) {
	for _, r := range spec.Releases() {
		if load(r) == nil {
			t.Fatalf("release %s has no current compiled form: run 'make generate'", r)
		}
		if n := testing.AllocsPerRun(50, func() { load(r) }); n > 1 {
			t.Errorf("loading compiled release %s allocates %v times; at most 1 (the top Spec)", r, n)
		}
	}
}
