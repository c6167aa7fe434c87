package elfread

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDebuginfodHostile: what a server sends is input. A body that is not
// ELF, an ELF of another build-id, a body over the cap (by Content-Length
// or by what arrives) and a short body are refused by name, and nothing is
// left in the cache; a URL that is not http or https is never fetched. The
// same answers come over http:// (the client's own HTTP/1.1) and https://
// (curl). (The real debuginfod server is exercised by layoutcheck's
// TestDebuginfod.)
func TestDebuginfodHostile(t *testing.T) {
	elfBytes, _ := servedLib(t)
	const want = "0123456789abcdef0123456789abcdef01234567"
	bodies := map[string]func(w http.ResponseWriter, r *http.Request){
		"garbage": func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("\x7fELF\x02\x01\x01 garbage")) },
		"other":   func(w http.ResponseWriter, _ *http.Request) { w.Write(elfBytes) },
		"huge": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "999999999999")
			w.Write([]byte("x"))
		},
		"stream": func(w http.ResponseWriter, _ *http.Request) {
			for range 64 {
				w.Write(make([]byte, 1024))
				w.(http.Flusher).Flush()
			}
		},
		"missing": func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
		"stall": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Write(make([]byte, 10))
			w.(http.Flusher).Flush()
			// Until the client gives up (or long after its 1 s timeout).
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		},
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
		if !strings.HasSuffix(r.URL.Path, "/buildid/"+want+"/debuginfo") {
			http.Error(w, "bad path "+r.URL.Path, http.StatusBadRequest)
			return
		}
		bodies[kind](w, r)
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			base := srv.URL
			if scheme == "https" {
				needCurl(t)
				tls := httptest.NewTLSServer(handler)
				defer tls.Close()
				trustTLS(t, tls)
				base = tls.URL
			}
			for kind, msg := range map[string]string{
				"garbage": "what arrived is refused: not an ELF file",
				"other":   "what arrived has build-id",
				"huge":    "over the 4096-byte cap (DEBUGINFOD_MAXSIZE)",
				"stream":  "more than the 4096-byte cap (DEBUGINFOD_MAXSIZE)",
				"missing": "404",
				"stall":   "no data for 1s (DEBUGINFOD_TIMEOUT) after 10 bytes",
			} {
				cache := t.TempDir()
				c := &Debuginfod{URLs: []string{base + "/" + kind}, CacheDir: cache, Timeout: 10 * time.Second, MaxBytes: 4096}
				if kind == "stall" {
					c.Timeout = time.Second
				}
				if kind == "other" || kind == "garbage" {
					c.MaxBytes = int64(len(elfBytes)) + 1
				}
				_, err := c.Fetch(want)
				if err == nil || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), base+"/"+kind+"/buildid/") {
					t.Fatalf("%s: want one line naming the URL and containing %q, got %v", kind, msg, err)
				}
				assertCacheEmpty(t, cache, want)
				t.Logf("%s: %v", kind, err)
			}
		})
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://127.0.0.1/", "gopher://x", "not a url"} {
		c := &Debuginfod{URLs: []string{bad}, CacheDir: t.TempDir(), MaxBytes: 4096}
		if _, err := c.Fetch(want); err == nil || !strings.Contains(err.Error(), "not an http or https URL") {
			t.Fatalf("%s: want a refusal, got %v", bad, err)
		}
	}
	for _, id := range []string{"../../etc", "ABCDEF", "12", "xyz0"} {
		c := &Debuginfod{URLs: []string{srv.URL}, CacheDir: t.TempDir()}
		if _, err := c.Fetch(id); err == nil || !strings.Contains(err.Error(), "not a hex build-id") {
			t.Fatalf("build-id %q: want a refusal, got %v", id, err)
		}
	}
}

// TestDebuginfodEnv: the client follows elfutils' variables.
func TestDebuginfodEnv(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	if DebuginfodFromEnv() != nil {
		t.Fatal("no DEBUGINFOD_URLS: no client")
	}
	t.Setenv("DEBUGINFOD_URLS", " http://a:1  https://b/x ")
	t.Setenv("DEBUGINFOD_CACHE_PATH", "/tmp/somewhere")
	t.Setenv("DEBUGINFOD_TIMEOUT", "7")
	t.Setenv("DEBUGINFOD_MAXSIZE", "12345")
	t.Setenv("DEBUGINFOD_MAXTIME", "60")
	c := DebuginfodFromEnv()
	if c == nil || len(c.URLs) != 2 || c.URLs[1] != "https://b/x" || c.CacheDir != "/tmp/somewhere" || c.Timeout != 7*time.Second || c.MaxBytes != 12345 || c.MaxTime != time.Minute {
		t.Fatalf("client %+v", c)
	}
	t.Setenv("DEBUGINFOD_CACHE_PATH", "")
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	if c := DebuginfodFromEnv(); c.CacheDir != "/tmp/xdg/debuginfod_client" {
		t.Fatalf("default cache %s", c.CacheDir)
	}
}
