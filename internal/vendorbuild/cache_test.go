package vendorbuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tarball is a gzip'd tar of the entries (name -> content; a name ending
// in "@" is a symlink to the content).
func tarball(t testing.TB, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range entries {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if link, ok := strings.CutSuffix(name, "@"); ok {
			h = &tar.Header{Name: link, Linkname: body, Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeSources is a directory holding two small tarballs under the real
// names.
func fakeSources(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []struct{ name, top string }{{FabricTarball, FabricTop}, {PluginTarball, PluginTop}} {
		data := tarball(t, map[string]string{f.top + "/README": "fake " + f.name})
		if err := os.WriteFile(filepath.Join(dir, f.name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeRecipe unpacks both tarballs and writes a plugin file, counting its
// runs; it takes long enough for a second caller to arrive meanwhile.
func fakeRecipe(runs *atomic.Int32) func(context.Context, *builder) error {
	return func(ctx context.Context, b *builder) error {
		runs.Add(1)
		for _, f := range []string{FabricTarball, PluginTarball} {
			if err := b.Extract(f); err != nil {
				return err
			}
		}
		if err := b.Sh(ctx, ".", nil, "sleep", "0.3"); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(b.Dir(), "lib"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(b.Dir(), "lib", PluginFile), []byte("a plugin built for "+b.Final()), 0o755)
	}
}

// TestConcurrentGetsBuildOnce: two callers at once get one build; the one
// that waited reuses it.
func TestConcurrentGetsBuildOnce(t *testing.T) {
	var runs atomic.Int32
	o := Options{Sources: fakeSources(t), Cache: t.TempDir(), steps: fakeRecipe(&runs)}
	var wg sync.WaitGroup
	builds := make([]*Build, 2)
	errs := make([]error, 2)
	for i := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			builds[i], errs[i] = Get(t.Context(), o)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the recipe ran %d times for two concurrent callers, want 1", n)
	}
	if builds[0].Cached == builds[1].Cached || builds[0].Plugin != builds[1].Plugin {
		t.Errorf("want one build and one reuse of the same plugin: %+v, %+v", builds[0], builds[1])
	}
	leftovers, _ := filepath.Glob(filepath.Join(o.Cache, "*.build-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary build directories left behind: %v", leftovers)
	}
}

// TestBrokenCacheIsRebuilt: an entry whose plugin changed, or that has no
// stamp, is never reused: it is removed and built again.
func TestBrokenCacheIsRebuilt(t *testing.T) {
	var runs atomic.Int32
	o := Options{Sources: fakeSources(t), Cache: t.TempDir(), steps: fakeRecipe(&runs)}
	b, err := Get(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, breakIt := range []func() error{
		func() error { return os.WriteFile(b.Plugin, []byte("truncated"), 0o755) },
		func() error { return os.Remove(filepath.Join(b.Dir, stampFile)) },
		func() error { return os.Remove(b.Plugin) },
	} {
		before := runs.Load()
		if err := breakIt(); err != nil {
			t.Fatal(err)
		}
		again, err := Get(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		if again.Cached || runs.Load() != before+1 {
			t.Errorf("a broken entry was reused (cached %v, runs %d -> %d)", again.Cached, before, runs.Load())
		}
	}
}

// TestFailedBuildLeavesNothing: a failing step names itself and quotes
// the log; no entry and no temporary directory is left.
func TestFailedBuildLeavesNothing(t *testing.T) {
	o := Options{Sources: fakeSources(t), Cache: t.TempDir(), steps: func(ctx context.Context, b *builder) error {
		return b.Sh(ctx, ".", nil, "sh", "-c", "echo the compiler said no; exit 3")
	}}
	_, err := Get(t.Context(), o)
	if err == nil || !strings.Contains(err.Error(), "the compiler said no") || !strings.Contains(err.Error(), "sh -c") {
		t.Fatalf("Get = %v; want the failed step and its output", err)
	}
	left, _ := os.ReadDir(o.Cache)
	for _, e := range left {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left in the cache after a failed build: %s", e.Name())
		}
	}
}

// TestBuildIsBounded: a step that would run past the deadline is killed
// and the error says it was the deadline.
func TestBuildIsBounded(t *testing.T) {
	o := Options{Sources: fakeSources(t), Cache: t.TempDir(), steps: func(ctx context.Context, b *builder) error {
		return b.Sh(ctx, ".", nil, "sleep", "30")
	}}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Get(ctx, o)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get = %v; want the deadline named", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Get took %s past a 300 ms deadline", took)
	}
}

// TestAbsent: a sources directory without both tarballs is an *Absent
// naming what is missing, before anything is built.
func TestAbsent(t *testing.T) {
	dir := fakeSources(t)
	if err := os.Remove(filepath.Join(dir, PluginTarball)); err != nil {
		t.Fatal(err)
	}
	_, err := Get(t.Context(), Options{Sources: dir, Cache: t.TempDir()})
	var a *Absent
	if !errors.As(err, &a) || len(a.Missing) != 1 || a.Missing[0] != PluginTarball || !strings.Contains(err.Error(), PluginTarball) {
		t.Errorf("Get = %v; want an *Absent naming %s", err, PluginTarball)
	}
	t.Setenv(EnvSources, t.TempDir())
	if _, err := Sources("/"); !errors.As(err, &a) || len(a.Missing) != 2 {
		t.Errorf("Sources with $%s at an empty directory = %v; want both tarballs missing", EnvSources, err)
	}
}

// TestUntarRefusesEscapes: entries and symlinks that leave the directory,
// and entry types that are not unpacked, are refused by name.
func TestUntarRefusesEscapes(t *testing.T) {
	for name, entries := range map[string]map[string]string{
		"../outside":  {"../outside": "x"},
		"/etc/passwd": {"/etc/passwd": "x"},
		"up@":         {"top/up@": "../../etc"},
		"absolute@":   {"top/absolute@": "/etc/passwd"},
	} {
		err := untar(bytes.NewReader(tarball(t, entries)), t.TempDir(), "t.tar.gz")
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(strings.TrimSuffix(name, "@"), "@")) && !strings.Contains(err.Error(), "leaves") {
			t.Errorf("%s: untar = %v; want it refused", name, err)
		}
	}
	if err := untar(strings.NewReader("not gzip"), t.TempDir(), "t.tar.gz"); err == nil || !strings.Contains(err.Error(), "t.tar.gz") {
		t.Errorf("untar of a non-gzip stream = %v; want it refused by name", err)
	}
}

// FuzzUntar: whatever the bytes, untar returns (no panic) and writes
// nothing outside its directory.
func FuzzUntar(f *testing.F) {
	f.Add(tarball(f, map[string]string{"a/b": "c", "a/l@": "b"}))
	f.Add(tarball(f, map[string]string{"../x": "y"}))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "in")
		_ = untar(bytes.NewReader(data), dir, "fuzz.tar.gz")
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "in" {
				t.Errorf("untar wrote %s outside its directory", e.Name())
			}
		}
	})
}
