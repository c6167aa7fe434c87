package debuginfod_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/debuginfod"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

func TestMain(m *testing.M) {
	// Debian's debuginfod package sets DEBUGINFOD_URLS for login shells; the
	// tests never download from a server they did not start.
	os.Unsetenv("DEBUGINFOD_URLS")
	os.Exit(m.Run())
}

// servedLib builds a small shared library with a build-id, what the test
// servers serve, and returns its bytes and build-id.
func servedLib(t *testing.T) ([]byte, string) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.c"), []byte("struct s { int a; } s;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libs.so", "", "", []string{"s.c"}, "-Wl,--build-id"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "libs.so")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	o, err := elfread.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if len(o.BuildID) < 4 {
		t.Fatalf("%s has no build-id (%q)", p, o.BuildID)
	}
	return b, o.BuildID
}

// client is a Client of these servers with the reader's build-id check.
func client(urls ...string) *debuginfod.Client {
	return &debuginfod.Client{URLs: urls, Timeout: 10 * time.Second, MaxBytes: 1 << 20, Verify: elfread.VerifyBuildID}
}

// trust makes c trust the TLS test server's certificate (if srv is one).
func trust(c *debuginfod.Client, srv *httptest.Server) *debuginfod.Client {
	if srv.Certificate() == nil {
		return c
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c.TrustForTest(pool)
	return c
}

func fetch(c *debuginfod.Client, id string) (string, error) {
	return c.Fetch(context.Background(), id, debuginfod.Debuginfo)
}

// fetchWithin runs Fetch, failing the test if it has not returned in d: a
// limit that does not work shows as a failure, not a hung test.
func fetchWithin(t *testing.T, c *debuginfod.Client, id string, d time.Duration, why string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := fetch(c, id); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("Fetch still running after %v: %s", d, why)
		return nil
	}
}

// assertCacheEmpty: a refused download leaves nothing under the build-id.
func assertCacheEmpty(t *testing.T, cache, id string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(cache, id, "*"))
	left2, _ := filepath.Glob(filepath.Join(cache, id, ".*"))
	if len(left)+len(left2) != 0 {
		t.Fatalf("the cache holds %v after a refused download", append(left, left2...))
	}
}

// assertCached: the download succeeded and the cache holds exactly what
// was served.
func assertCached(t *testing.T, c *debuginfod.Client, id string, want []byte) {
	t.Helper()
	p, err := fetch(c, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) || p != filepath.Join(c.CacheDir, id, "debuginfo") {
		t.Fatalf("cache file %s: %d bytes (want %d), %v", p, len(got), len(want), err)
	}
}

// rawServer is a TCP server on loopback that answers every request with
// what answer returns for the request head, then closes the connection.
// It records the request heads.
type rawServer struct {
	l     net.Listener
	mu    sync.Mutex
	heads []string
	wg    sync.WaitGroup
}

func newRawServer(t *testing.T, answer func(head string) string) *rawServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{l: l}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(30 * time.Second))
				br := bufio.NewReader(io.LimitReader(conn, 64<<10))
				var head strings.Builder
				for {
					line, err := br.ReadString('\n')
					head.WriteString(line)
					if err != nil || line == "\r\n" {
						break
					}
				}
				s.mu.Lock()
				s.heads = append(s.heads, head.String())
				s.mu.Unlock()
				io.WriteString(conn, answer(head.String()))
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) URL() string { return "http://" + s.l.Addr().String() }

func (s *rawServer) Heads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.heads...)
}

// chunked encodes b in chunks of the given sizes (cycled), with a chunk
// extension on each and a trailer after the last.
func chunked(b []byte, sizes ...int) string {
	var s strings.Builder
	for i := 0; len(b) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(b))
		fmt.Fprintf(&s, "%x;piece=%d\r\n%s\r\n", n, i, b[:n])
		b = b[n:]
	}
	s.WriteString("0\r\nX-Digest: none\r\nX-Other: 1\r\n\r\n")
	return s.String()
}

// TestDebuginfodHostile: what a server sends is input. A body that is not
// ELF, an ELF of another build-id, a body over the cap (by Content-Length
// or by what arrives), a body that stalls, a status other than 200 and a
// short body are refused by name, and nothing is left in the cache; a URL
// that is not http or https is never fetched. The same answers come over
// http:// and https://. (The real debuginfod server is exercised by
// layoutcheck's TestDebuginfod.)
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
		"broken":  func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "oops", http.StatusBadGateway) },
		"forbid":  func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) },
		"gzip": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(elfBytes)
		},
		"short": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Write(make([]byte, 10))
		},
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
		"nohead": func(w http.ResponseWriter, r *http.Request) {
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
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			srv := httptest.NewServer(handler)
			if scheme == "https" {
				srv.Close()
				srv = httptest.NewTLSServer(handler)
			}
			defer srv.Close()
			for kind, msg := range map[string]string{
				"garbage": "what arrived is refused: not an ELF file",
				"other":   "what arrived is refused: what arrived has build-id",
				"huge":    "999999999999 bytes, over the 4096-byte cap (DEBUGINFOD_MAXSIZE)",
				"stream":  "more than the 4096-byte cap (DEBUGINFOD_MAXSIZE)",
				"missing": "404 Not Found: the server has no debug file for this build-id",
				"broken":  "502 Bad Gateway: a server error; try again later",
				"forbid":  "403 Forbidden: not a debug file; check the server URL",
				"gzip":    `Content-Encoding "gzip" although the request asked for identity`,
				"short":   "the body ended after 10 bytes: unexpected EOF",
				"stall":   "no data for 1s (DEBUGINFOD_TIMEOUT) after 10 bytes",
				"nohead":  "no answer in 1s (DEBUGINFOD_TIMEOUT)",
			} {
				cache := t.TempDir()
				c := trust(client(srv.URL+"/"+kind), srv)
				c.CacheDir, c.MaxBytes = cache, 4096
				if kind == "stall" || kind == "nohead" {
					c.Timeout = time.Second
				}
				if kind == "other" || kind == "garbage" || kind == "gzip" {
					c.MaxBytes = int64(len(elfBytes)) + 1
				}
				err := fetchWithin(t, c, want, time.Minute, "a hostile answer hung the download")
				if err == nil || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), srv.URL+"/"+kind+"/buildid/") {
					t.Errorf("%s: want one line naming the URL and containing %q, got %v", kind, msg, err)
				}
				assertCacheEmpty(t, cache, want)
				t.Logf("%s: %v", kind, err)
			}
		})
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://127.0.0.1/", "gopher://x", "not a url", "http://user:pw@"} {
		c := client(bad)
		c.CacheDir = t.TempDir()
		if _, err := fetch(c, want); err == nil || !strings.Contains(err.Error(), "not an http or https URL") || strings.Contains(err.Error(), "pw") {
			t.Fatalf("%s: want a refusal without the password, got %v", bad, err)
		}
	}
	for _, id := range []string{"../../etc", "ABCDEF", "12", "xyz0"} {
		c := client("http://127.0.0.1:1")
		c.CacheDir = t.TempDir()
		if _, err := fetch(c, id); err == nil || !strings.Contains(err.Error(), "not a hex build-id") {
			t.Fatalf("build-id %q: want a refusal, got %v", id, err)
		}
	}
	c := client("http://127.0.0.1:1")
	c.CacheDir = t.TempDir()
	if _, err := c.Fetch(context.Background(), want, "source"); err == nil || !strings.Contains(err.Error(), `kind "source"`) {
		t.Fatalf("a kind without a build-id: want a refusal, got %v", err)
	}
	c.Verify = nil
	if _, err := fetch(c, want); err == nil || !strings.Contains(err.Error(), "no build-id check") {
		t.Fatalf("no Verify: want a refusal, got %v", err)
	}
}

// TestDebuginfodEnv: the client follows elfutils' variables.
func TestDebuginfodEnv(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	if debuginfod.FromEnv(elfread.VerifyBuildID) != nil {
		t.Fatal("no DEBUGINFOD_URLS: no client")
	}
	t.Setenv("DEBUGINFOD_URLS", " http://a:1  https://b/x ")
	t.Setenv("DEBUGINFOD_CACHE_PATH", "/tmp/somewhere")
	t.Setenv("DEBUGINFOD_TIMEOUT", "7")
	t.Setenv("DEBUGINFOD_MAXSIZE", "12345")
	t.Setenv("DEBUGINFOD_MAXTIME", "60")
	c := debuginfod.FromEnv(elfread.VerifyBuildID)
	if c == nil || len(c.URLs) != 2 || c.URLs[1] != "https://b/x" || c.CacheDir != "/tmp/somewhere" || c.Timeout != 7*time.Second || c.MaxBytes != 12345 || c.MaxTime != time.Minute || c.Verify == nil {
		t.Fatalf("client %+v", c)
	}
	t.Setenv("DEBUGINFOD_CACHE_PATH", "")
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	if c := debuginfod.FromEnv(elfread.VerifyBuildID); c.CacheDir != "/tmp/xdg/debuginfod_client" {
		t.Fatalf("default cache %s", c.CacheDir)
	}
}

// TestDebuginfodCache: a cached file that passes the check is used
// without asking a server; one that fails it is downloaded again and
// replaced; each kind has its own URL and cache file.
func TestDebuginfodCache(t *testing.T) {
	elfBytes, id := servedLib(t)
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Write(elfBytes)
	}))
	defer srv.Close()
	asked := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(paths, " ")
	}
	c := client(srv.URL + "/x")
	c.CacheDir = t.TempDir()
	want := "/x/buildid/" + id + "/debuginfo"
	assertCached(t, c, id, elfBytes)
	assertCached(t, c, id, elfBytes)
	if asked() != want {
		t.Fatalf("the second Fetch asked the server again: %s", asked())
	}
	if err := os.WriteFile(filepath.Join(c.CacheDir, id, "debuginfo"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertCached(t, c, id, elfBytes)
	if asked() != want+" "+want {
		t.Fatalf("a cache file that fails the check was used: %s", asked())
	}
	p, err := c.Fetch(context.Background(), id, debuginfod.Executable)
	if err != nil || p != filepath.Join(c.CacheDir, id, "executable") || asked() != want+" "+want+" /x/buildid/"+id+"/executable" {
		t.Fatalf("executable: %s %v (asked %s)", p, err, asked())
	}
}

// TestDebuginfodChunked: a chunked body (chunk extensions, trailers,
// chunks of 1 byte to 4 KiB) arrives whole; the request says what the
// client is and asks for the file as it is; bad chunking is refused with
// nothing cached.
func TestDebuginfodChunked(t *testing.T) {
	elfBytes, id := servedLib(t)
	srv := newRawServer(t, func(head string) string {
		switch {
		case strings.HasPrefix(head, "GET /good/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n" + chunked(elfBytes, 1, 4096, 7, 300)
		case strings.HasPrefix(head, "GET /badsize/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n\x7fELF\x02\r\nzz\r\n"
		case strings.HasPrefix(head, "GET /bigsize/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n17fffffffffffffff\r\n" + string(elfBytes)
		case strings.HasPrefix(head, "GET /cut/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.TrimSuffix(chunked(elfBytes, 4096), "0\r\nX-Digest: none\r\nX-Other: 1\r\n\r\n")
		case strings.HasPrefix(head, "GET /overcap/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(append(elfBytes, elfBytes...), 512)
		case strings.HasPrefix(head, "GET /bighead/"):
			return "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("a", 64<<10) + "\r\n\r\n"
		case strings.HasPrefix(head, "GET /notHTTP/"):
			return "SSH-2.0-OpenSSH\r\n\r\n"
		}
		return "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
	})
	c := client(srv.URL() + "/good")
	c.CacheDir, c.MaxBytes = t.TempDir(), int64(len(elfBytes))
	assertCached(t, c, id, elfBytes)
	head := srv.Heads()[0]
	u, _ := url.Parse(srv.URL())
	for _, want := range []string{
		"GET /good/buildid/" + id + "/debuginfo HTTP/1.1\r\n",
		"\r\nHost: " + u.Host + "\r\n",
		"\r\nUser-Agent: nrtabi/",
		"\r\nAccept-Encoding: identity\r\n",
		"\r\nConnection: close\r\n",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("the request lacks %q:\n%s", want, head)
		}
	}
	// A user and password in the server URL go as Basic credentials.
	c = client("http://nrtabi:s3cret@" + u.Host + "/good")
	c.CacheDir, c.MaxBytes = t.TempDir(), int64(len(elfBytes))
	assertCached(t, c, id, elfBytes)
	if heads := srv.Heads(); !strings.Contains(heads[len(heads)-1], "\r\nAuthorization: Basic bnJ0YWJpOnMzY3JldA==\r\n") {
		t.Errorf("the URL's credentials were not sent:\n%s", heads[len(heads)-1])
	}
	for kind, msg := range map[string]string{
		"badsize": "the body ended after 5 bytes: invalid byte in chunk length",
		"bigsize": "the body ended after 0 bytes: http chunk length too large",
		"cut":     "the body ended after " + fmt.Sprint(len(elfBytes)) + " bytes: unexpected EOF",
		"overcap": "more than the " + fmt.Sprint(len(elfBytes)+100) + "-byte cap (DEBUGINFOD_MAXSIZE)",
		"bighead": "server response headers exceeded 32768 bytes",
		"notHTTP": "malformed HTTP response",
	} {
		cache := t.TempDir()
		c := client(srv.URL() + "/" + kind)
		c.CacheDir, c.MaxBytes = cache, int64(len(elfBytes))+100
		_, err := fetch(c, id)
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), srv.URL()+"/"+kind+"/buildid/") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want one line naming the URL and containing %q, got %v", kind, msg, err)
		}
		assertCacheEmpty(t, cache, id)
	}
}

// hopServer redirects /hop/N/buildid/ID/debuginfo to N-1 (relative,
// absolute-path and absolute Locations, every redirect status in turn) and
// serves the file at 0. It counts the requests.
func hopServer(t *testing.T, body []byte, hits *atomic.Int32) *httptest.Server {
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		var n int
		var rest string
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d/", &n); err != nil {
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
		rest = strings.SplitN(r.URL.Path, "/", 4)[3]
		if n == 0 {
			w.Write(body)
			return
		}
		codes := []int{301, 302, 303, 307, 308}
		loc := []string{
			fmt.Sprintf("../../../%d/%s", n-1, rest),
			fmt.Sprintf("/hop/%d/%s", n-1, rest),
			fmt.Sprintf("http://%s/hop/%d/%s", r.Host, n-1, rest),
		}[n%3]
		w.Header().Set("Location", loc)
		w.WriteHeader(codes[n%len(codes)])
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestDebuginfodRedirects: five redirects of every kind are followed, a
// sixth is refused naming the limit, and a redirect to another scheme or
// without a Location is refused; nothing is cached on a refusal.
func TestDebuginfodRedirects(t *testing.T) {
	elfBytes, id := servedLib(t)
	var hits atomic.Int32
	srv := hopServer(t, elfBytes, &hits)
	c := client(srv.URL + "/hop/5")
	c.CacheDir = t.TempDir()
	assertCached(t, c, id, elfBytes)
	if hits.Load() != 6 {
		t.Fatalf("5 redirects: %d requests", hits.Load())
	}
	cache := t.TempDir()
	c = client(srv.URL + "/hop/6")
	c.CacheDir = cache
	_, err := fetch(c, id)
	if err == nil || !strings.Contains(err.Error(), "more than 5 redirects") || !strings.Contains(err.Error(), srv.URL+"/hop/6/buildid/"+id+"/debuginfo (redirected to "+srv.URL+"/hop/1/") {
		t.Fatalf("6 redirects: %v", err)
	}
	assertCacheEmpty(t, cache, id)

	raw := newRawServer(t, func(head string) string {
		if strings.HasPrefix(head, "GET /ftp/") {
			return "HTTP/1.1 302 Found\r\nLocation: ftp://127.0.0.1/x\r\n\r\n"
		}
		if strings.HasPrefix(head, "GET /file/") {
			return "HTTP/1.1 301 Moved\r\nLocation: file:///etc/passwd\r\n\r\n"
		}
		if strings.HasPrefix(head, "GET /loop/") {
			return "HTTP/1.1 302 Found\r\nLocation: /loop/x\r\nContent-Length: 0\r\n\r\n"
		}
		return "HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n"
	})
	for kind, msg := range map[string]string{
		"ftp":        "redirect to ftp://127.0.0.1/x refused (http or https only)",
		"file":       "redirect to file:///etc/passwd refused (http or https only)",
		"nolocation": "HTTP 302 redirect without a Location",
		"loop":       "(redirected to " + raw.URL() + "/loop/x): more than 5 redirects",
	} {
		cache := t.TempDir()
		c := client(raw.URL() + "/" + kind)
		c.CacheDir = cache
		if _, err := fetch(c, id); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: want %q, got %v", kind, msg, err)
		}
		assertCacheEmpty(t, cache, id)
	}
}

// forwardProxy is an HTTP proxy on loopback: it takes absolute-form
// requests for the host name origin, forwards them to the server at
// originAddr, and records each request line and its Proxy-Authorization.
func forwardProxy(t *testing.T, origin, originAddr string) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI+" auth="+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		if !r.URL.IsAbs() || r.URL.Host != origin {
			http.Error(w, "this proxy forwards absolute URLs to "+origin+" only", http.StatusBadRequest)
			return
		}
		to := *r.URL
		to.Host = originAddr
		out, err := http.NewRequest(r.Method, to.String(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		out.Header.Del("Proxy-Authorization")
		out.Host = r.Host
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// proxyChildEnv names the variables through which TestDebuginfodProxy
// hands a download to TestProxyChild.
const proxyChildEnv = "NRTABI_DEBUGINFOD_PROXY_CHILD"

// TestProxyChild is TestDebuginfodProxy's download, in a process of its
// own: http.ProxyFromEnvironment reads the environment once per process.
// It writes the error (or "ok") to the file the parent names.
func TestProxyChild(t *testing.T) {
	args := strings.Fields(os.Getenv(proxyChildEnv))
	if len(args) != 4 {
		t.Skip("run by TestDebuginfodProxy")
	}
	server, id, cache, out := args[0], args[1], args[2], args[3]
	c := client(server)
	c.CacheDir, c.Timeout = cache, 5*time.Second
	msg := "ok"
	if _, err := fetch(c, id); err != nil {
		msg = err.Error()
	}
	if err := os.WriteFile(out, []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDebuginfodProxy: http_proxy sends the request to the proxy in
// absolute form, with the proxy URL's credentials, redirects included;
// no_proxy goes direct; a proxy that does not answer is named with the
// variables to fix. (net/http never sends loopback hosts through a proxy,
// so the server has a name only the proxy knows.)
func TestDebuginfodProxy(t *testing.T) {
	elfBytes, id := servedLib(t)
	var hits atomic.Int32
	origin := hopServer(t, elfBytes, &hits)
	const name = "debuginfod.nrtabi.invalid"
	proxy, seen := forwardProxy(t, name, strings.TrimPrefix(origin.URL, "http://"))
	pu, _ := url.Parse(proxy.URL)
	run := func(env ...string) (cache, msg string) {
		t.Helper()
		cache = t.TempDir()
		out := filepath.Join(t.TempDir(), "result")
		cmd := exec.Command(os.Args[0], "-test.run=^TestProxyChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "http_proxy=", "HTTP_PROXY=", "no_proxy=", "NO_PROXY=", "REQUEST_METHOD=")
		cmd.Env = append(cmd.Env, env...)
		cmd.Env = append(cmd.Env, proxyChildEnv+"=http://"+name+"/hop/1 "+id+" "+cache+" "+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the child: %v\n%s", err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return cache, string(b)
	}
	cache, msg := run("http_proxy=http://nrtabi:s3cret@" + pu.Host)
	if msg != "ok" {
		t.Fatalf("through the proxy: %s", msg)
	}
	if got, err := os.ReadFile(filepath.Join(cache, id, "debuginfo")); err != nil || !bytes.Equal(got, elfBytes) {
		t.Fatalf("through the proxy: %d bytes cached, %d served (%v)", len(got), len(elfBytes), err)
	}
	want := []string{
		"GET http://" + name + "/hop/1/buildid/" + id + "/debuginfo auth=Basic bnJ0YWJpOnMzY3JldA==",
		"GET http://" + name + "/hop/0/buildid/" + id + "/debuginfo auth=Basic bnJ0YWJpOnMzY3JldA==",
	}
	if got := seen(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the proxy saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	before := len(seen())
	cache, msg = run("HTTP_PROXY="+proxy.URL, "no_proxy=example.com,.nrtabi.invalid")
	if len(seen()) != before || msg == "ok" {
		t.Fatalf("no_proxy: the request went through the proxy (%s)", msg)
	}
	assertCacheEmpty(t, cache, id)
	_, msg = run("HTTP_PROXY=" + proxy.URL)
	if len(seen()) != before+2 || msg != "ok" {
		t.Fatalf("HTTP_PROXY: the proxy saw %d requests, want 2 (%s)", len(seen())-before, msg)
	}
	_, msg = run("http_proxy=http://nrtabi:s3cret@[bad")
	if msg == "ok" || strings.Contains(msg, "s3cret") {
		t.Fatalf("a proxy that is not a URL: want an error without the password, got %s", msg)
	}
	t.Log(msg)
	cache, msg = run("http_proxy=http://127.0.0.1:1")
	if !strings.Contains(msg, "the proxy 127.0.0.1:1: ") || !strings.Contains(msg, "fix http_proxy or https_proxy, or add "+name+" to no_proxy") {
		t.Fatalf("a proxy that does not answer: %s", msg)
	}
	assertCacheEmpty(t, cache, id)
}

// TestDebuginfodMaxTime: a server that keeps sending, a byte at a time
// within the stall timeout, is stopped by DEBUGINFOD_MAXTIME, over http and
// https; so is one that never answers the request.
func TestDebuginfodMaxTime(t *testing.T) {
	_, id := servedLib(t)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/silent/") {
			select {
			case <-r.Context().Done():
			case <-time.After(90 * time.Second):
			}
			return
		}
		// For 90 s at most, so that a failing test ends.
		for range 900 {
			if _, err := w.Write([]byte{0}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			srv := httptest.NewServer(handler)
			if scheme == "https" {
				srv.Close()
				srv = httptest.NewTLSServer(handler)
			}
			defer srv.Close()
			for _, path := range []string{"/drip", "/silent"} {
				cache := t.TempDir()
				c := trust(client(srv.URL+path), srv)
				c.CacheDir, c.MaxTime = cache, time.Second
				err := fetchWithin(t, c, id, time.Minute, "DEBUGINFOD_MAXTIME did not end the download")
				if err == nil || !strings.Contains(err.Error(), "not done in 1s (DEBUGINFOD_MAXTIME) after ") {
					t.Fatalf("%s: want the MAXTIME error, got %v", path, err)
				}
				assertCacheEmpty(t, cache, id)
				t.Log(err)
			}
		})
	}
}

// TestDebuginfodHTTPS: https:// with the CA the client is told to trust,
// and an http:// server's redirect to https://, within the same 5
// redirects; an untrusted certificate is named with its fix.
func TestDebuginfodHTTPS(t *testing.T) {
	elfBytes, id := servedLib(t)
	var agent atomic.Value
	agent.Store("")
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent.Store(r.Header.Get("User-Agent") + " " + r.Header.Get("Accept-Encoding") + " " + r.Header.Get("Authorization"))
		if r.URL.Path == "/hop/buildid/"+id+"/debuginfo" {
			http.Redirect(w, r, "/buildid/"+id+"/debuginfo", http.StatusFound)
			return
		}
		w.Write(elfBytes)
	}))
	defer srv.Close()
	c := trust(client(srv.URL), srv)
	c.CacheDir = t.TempDir()
	assertCached(t, c, id, elfBytes)
	if a := agent.Load().(string); !strings.HasPrefix(a, "nrtabi/") || !strings.HasSuffix(a, " identity ") {
		t.Errorf("sent User-Agent, Accept-Encoding and Authorization %q", a)
	}
	// A user and password in the URL reach the server.
	c = trust(client(strings.Replace(srv.URL, "https://", `https://nrtabi:s3%22c%5Cret@`, 1)), srv)
	c.CacheDir = t.TempDir()
	assertCached(t, c, id, elfBytes)
	if a := agent.Load().(string); !strings.HasSuffix(a, " identity Basic bnJ0YWJpOnMzImNccmV0") {
		t.Errorf("sent User-Agent, Accept-Encoding and Authorization %q", a)
	}

	// http:// -> 3 hops -> https:// (1 more hop there) is 5 redirects.
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d/", &n)
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/r/%d/buildid/%s/debuginfo", n-1, id), http.StatusFound)
			return
		}
		http.Redirect(w, r, srv.URL+"/hop/buildid/"+id+"/debuginfo", http.StatusMovedPermanently)
	}))
	defer redirect.Close()
	c = trust(client(redirect.URL+"/r/3"), srv)
	c.CacheDir = t.TempDir()
	assertCached(t, c, id, elfBytes)
	cache := t.TempDir()
	c = trust(client(redirect.URL+"/r/4"), srv)
	c.CacheDir = cache
	if _, err := fetch(c, id); err == nil || !strings.Contains(err.Error(), "more than 5 redirects") {
		t.Fatalf("6 redirects across http and https: %v", err)
	}
	assertCacheEmpty(t, cache, id)

	// The test server's certificate, not trusted.
	cache = t.TempDir()
	c = client(srv.URL)
	c.CacheDir = cache
	if _, err := fetch(c, id); err == nil || !strings.Contains(err.Error(), srv.URL+"/buildid/") || !strings.Contains(err.Error(), "TLS: ") || !strings.Contains(err.Error(), "set SSL_CERT_FILE to its PEM file") {
		t.Fatalf("an untrusted certificate: %v", err)
	} else {
		t.Log(err)
	}
	assertCacheEmpty(t, cache, id)
}

// TestDebuginfodCapEndless: a body of unknown length that would never end
// is cut at the cap, and the connection is closed then, not drained.
func TestDebuginfodCapEndless(t *testing.T) {
	_, id := servedLib(t)
	gone := make(chan int64, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sent int64
		buf := make([]byte, 16<<10)
		rc := http.NewResponseController(w)
		for {
			// A client that stops reading ends the handler too, so a
			// failing test does not hang in srv.Close.
			rc.SetWriteDeadline(time.Now().Add(90 * time.Second))
			n, err := w.Write(buf)
			sent += int64(n)
			if err != nil {
				gone <- sent
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	cache := t.TempDir()
	c := trust(client(srv.URL), srv)
	c.CacheDir, c.MaxBytes = cache, 100<<10
	err := fetchWithin(t, c, id, time.Minute, "the download was not stopped at the cap")
	if err == nil || !strings.Contains(err.Error(), "more than the 102400-byte cap (DEBUGINFOD_MAXSIZE)") {
		t.Fatalf("want the cap error, got %v", err)
	}
	t.Log(err)
	select {
	case sent := <-gone:
		t.Logf("the server sent %d bytes before the client was gone", sent)
	case <-time.After(time.Minute):
		t.Fatal("the server is still sending a minute after Fetch returned: the connection was left open")
	}
	assertCacheEmpty(t, cache, id)
}

// TestDebuginfodCancel: the caller's context ends a download.
func TestDebuginfodCancel(t *testing.T) {
	_, id := servedLib(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := client(srv.URL)
	c.CacheDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := c.Fetch(ctx, id, debuginfod.Debuginfo); err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("want the caller's deadline, got %v", err)
	}
	assertCacheEmpty(t, c.CacheDir, id)
}
