package debuginfod_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// treeOf lists every path under dir (dir itself left out).
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			got = append(got, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestDebuginfodCacheSymlinks: a build-id directory, or a cache file, that
// is a symbolic link is refused by name; nothing is written through it,
// outside the cache or inside; the link is left as it was.
func TestDebuginfodCacheSymlinks(t *testing.T) {
	elfBytes, id := servedLib(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(elfBytes) }))
	defer srv.Close()

	t.Run("build-id directory", func(t *testing.T) {
		c := client(srv.URL)
		c.CacheDir = t.TempDir()
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(c.CacheDir, id)); err != nil {
			t.Fatal(err)
		}
		_, err := fetch(c, id)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(c.CacheDir, id)+" is a symbolic link") {
			t.Fatalf("want the linked build-id directory refused by name, got %v", err)
		}
		if left := treeOf(t, outside); len(left) != 0 {
			t.Fatalf("written through the link, outside the cache: %v", left)
		}
		if st, err := os.Lstat(filepath.Join(c.CacheDir, id)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was not left as it was: %v %v", st, err)
		}
	})
	t.Run("cache file", func(t *testing.T) {
		c := client(srv.URL)
		c.CacheDir = t.TempDir()
		target := filepath.Join(t.TempDir(), "precious")
		if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(c.CacheDir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(c.CacheDir, id, "debuginfo")); err != nil {
			t.Fatal(err)
		}
		_, err := fetch(c, id)
		if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Fatalf("want the linked cache file refused by name, got %v", err)
		}
		if b, _ := os.ReadFile(target); string(b) != "precious" {
			t.Fatalf("the link's target was overwritten: %q", b)
		}
	})
	t.Run("link to a directory inside the cache", func(t *testing.T) {
		c := client(srv.URL)
		c.CacheDir = t.TempDir()
		if err := os.Mkdir(filepath.Join(c.CacheDir, "other"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("other", filepath.Join(c.CacheDir, id)); err != nil {
			t.Fatal(err)
		}
		if _, err := fetch(c, id); err == nil {
			t.Fatal("a build-id directory linked inside the cache was written through")
		}
		if left := treeOf(t, filepath.Join(c.CacheDir, "other")); len(left) != 0 {
			t.Fatalf("written through the link: %v", left)
		}
	})
}

// TestDebuginfodFailedLeavesNothing: a download that fails mid-body (the
// server promises more than it sends and closes) or is refused leaves no
// file and no directory in the cache tree, the build-id directory it made
// included; a build-id directory that was there before stays.
func TestDebuginfodFailedLeavesNothing(t *testing.T) {
	elfBytes, id := servedLib(t)
	cut := newRawServer(t, func(string) string {
		return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(elfBytes)) + "\r\n\r\n" + string(elfBytes[:len(elfBytes)/2])
	})
	notELF := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("not an ELF file")) }))
	defer notELF.Close()
	for _, srv := range []string{cut.URL(), notELF.URL} {
		c := client(srv)
		c.CacheDir = t.TempDir()
		if _, err := fetch(c, id); err == nil {
			t.Fatalf("%s: the download did not fail", srv)
		}
		if left := treeOf(t, c.CacheDir); len(left) != 0 {
			t.Fatalf("%s: a failed download left %v", srv, left)
		}
		// A cache root this Fetch made goes too.
		c.CacheDir = filepath.Join(t.TempDir(), "new", "cache")
		if _, err := fetch(c, id); err == nil {
			t.Fatalf("%s: the download did not fail", srv)
		}
		if _, err := os.Lstat(c.CacheDir); !os.IsNotExist(err) {
			t.Fatalf("%s: a failed download left the cache root it made: %v", srv, err)
		}
		// A build-id directory that was there is not ours to remove.
		c.CacheDir = t.TempDir()
		if err := os.Mkdir(filepath.Join(c.CacheDir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := fetch(c, id); err == nil {
			t.Fatalf("%s: the download did not fail", srv)
		}
		if left := treeOf(t, c.CacheDir); len(left) != 1 {
			t.Fatalf("%s: want the build-id directory alone, got %v", srv, left)
		}
	}
}
