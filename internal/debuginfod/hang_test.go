package debuginfod_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestDebuginfodCacheFIFO: a cache root, a build-id directory or a cache
// file that is a FIFO is refused by name, never opened blocking (a FIFO
// waits for a writer forever). (Before, a FIFO as the cache root hung in
// its open.)
func TestDebuginfodCacheFIFO(t *testing.T) {
	_, id := servedLib(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	defer srv.Close()
	mk := func(p string) {
		t.Helper()
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("cache root", func(t *testing.T) {
		c := client(srv.URL)
		c.CacheDir = filepath.Join(t.TempDir(), "cache")
		mk(c.CacheDir)
		err := fetchWithin(t, c, id, 10*time.Second, "the FIFO named as the cache root was opened blocking")
		if err == nil || !strings.Contains(err.Error(), c.CacheDir+" is a FIFO, not a directory") {
			t.Fatalf("want the FIFO refused by name, got %v", err)
		}
	})
	t.Run("build-id directory", func(t *testing.T) {
		c := client(srv.URL)
		c.CacheDir = t.TempDir()
		mk(filepath.Join(c.CacheDir, id))
		err := fetchWithin(t, c, id, 10*time.Second, "the FIFO as the build-id directory was opened blocking")
		if err == nil || !strings.Contains(err.Error(), filepath.Join(c.CacheDir, id)+" is a FIFO, not a directory") {
			t.Fatalf("want the FIFO refused by name, got %v", err)
		}
	})
	t.Run("cache file", func(t *testing.T) {
		c := client(srv.URL)
		c.CacheDir = t.TempDir()
		if err := os.Mkdir(filepath.Join(c.CacheDir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		mk(filepath.Join(c.CacheDir, id, "debuginfo"))
		err := fetchWithin(t, c, id, 10*time.Second, "the FIFO as the cache file was opened blocking")
		if err == nil || !strings.Contains(err.Error(), "is a FIFO, not a regular file") {
			t.Fatalf("want the FIFO refused by name, got %v", err)
		}
	})
}

// silentServer accepts connections and never answers; it counts the
// connections the client has closed.
func silentServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var closed atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				var b [4096]byte
				for {
					if _, err := conn.Read(b[:]); err != nil {
						closed.Add(1)
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return "http://" + l.Addr().String(), &closed
}

// TestDebuginfodServersAtOnce: the servers are queried at once, as
// elfutils' client does: three silent servers cost one DEBUGINFOD_TIMEOUT,
// not three in turn; a good server beside silent ones wins at once and
// the silent downloads are cancelled (their connections closed); and
// DEBUGINFOD_MAXTIME is one deadline for the whole Fetch. (Before, silent
// servers were tried one after another, 3 × the timeout.)
func TestDebuginfodServersAtOnce(t *testing.T) {
	elfBytes, id := servedLib(t)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(elfBytes) }))
	defer good.Close()
	var urls []string
	var closes []*atomic.Int32
	for range 3 {
		u, n := silentServer(t)
		urls, closes = append(urls, u), append(closes, n)
	}
	c := client(urls...)
	c.Timeout = 2 * time.Second
	c.CacheDir = t.TempDir()
	// Three in turn would take 6 s; at once, one timeout and a margin.
	err := fetchWithin(t, c, id, 5*time.Second, "silent servers are tried one after another")
	if err == nil || strings.Count(err.Error(), "no answer in 2s") != 3 || strings.Index(err.Error(), urls[0]) > strings.Index(err.Error(), urls[2]) {
		t.Fatalf("want each silent server named, in DEBUGINFOD_URLS order, got %v", err)
	}
	assertCacheEmpty(t, c.CacheDir, id)

	c = client(append(urls[:2:2], good.URL)...)
	c.Timeout = 20 * time.Second
	c.CacheDir = t.TempDir()
	if err := fetchWithin(t, c, id, 10*time.Second, "a good server waits behind silent ones"); err != nil {
		t.Fatalf("a good server beside silent ones: %v", err)
	}
	assertCached(t, c, id, elfBytes)
	deadline := time.Now().Add(10 * time.Second)
	for closes[0].Load() == 0 || closes[1].Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the silent servers' downloads were not cancelled once a good answer came")
		}
		time.Sleep(20 * time.Millisecond)
	}

	c = client(urls...)
	c.Timeout, c.MaxTime = 20*time.Second, time.Second
	c.CacheDir = t.TempDir()
	err = fetchWithin(t, c, id, 8*time.Second, "DEBUGINFOD_MAXTIME is not one deadline for all servers")
	if err == nil || strings.Count(err.Error(), "(DEBUGINFOD_MAXTIME)") != 3 {
		t.Fatalf("want every server stopped by the one MAXTIME, got %v", err)
	}
}
