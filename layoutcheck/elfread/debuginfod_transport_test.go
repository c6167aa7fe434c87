package elfread

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
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
)

// servedLib builds a small shared library with a build-id, what the test
// servers serve, and returns its bytes and build-id.
func servedLib(t *testing.T) ([]byte, string) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := writeFile(dir, "s.c", "struct s { int a; } s;\n"); err != nil {
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
	o, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if !validBuildID(o.BuildID) {
		t.Fatalf("%s has no build-id (%q)", p, o.BuildID)
	}
	return b, o.BuildID
}

func needCurl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skipf("skipping: the https:// transport is curl, and it is not on PATH (install the Debian package curl): %v", err)
	}
}

// trustTLS writes the test server's certificate as PEM and points curl's
// CURL_CA_BUNDLE at it.
func trustTLS(t *testing.T, srv *httptest.Server) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CURL_CA_BUNDLE", p)
}

// writeOtherCA points CURL_CA_BUNDLE at a self-signed certificate that
// signed nothing the test servers use.
func writeOtherCA(t *testing.T) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nrtabi test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CURL_CA_BUNDLE", p)
}

// fetchWithin runs Fetch, failing the test if it has not returned in d: a
// limit that does not work shows as a failure, not a hung test.
func fetchWithin(t *testing.T, c *Debuginfod, id string, d time.Duration, why string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := c.Fetch(id); done <- err }()
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
func assertCached(t *testing.T, c *Debuginfod, id string, want []byte) {
	t.Helper()
	p, err := c.Fetch(id)
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

// TestDebuginfodChunked: a chunked body (chunk extensions, trailers,
// chunks of 1 byte to 4 KiB) arrives whole; the request says what the
// client is and asks for the file as it is; bad chunking is refused by name
// with nothing cached.
func TestDebuginfodChunked(t *testing.T) {
	elfBytes, id := servedLib(t)
	srv := newRawServer(t, func(head string) string {
		switch {
		case strings.HasPrefix(head, "GET /good/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n" + chunked(elfBytes, 1, 4096, 7, 300)
		case strings.HasPrefix(head, "GET /badsize/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n\x7fELF\x02\r\nzz\r\n"
		case strings.HasPrefix(head, "GET /bigsize/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n" + string(elfBytes)
		case strings.HasPrefix(head, "GET /cut/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.TrimSuffix(chunked(elfBytes, 4096), "0\r\nX-Digest: none\r\nX-Other: 1\r\n\r\n")
		case strings.HasPrefix(head, "GET /overcap/"):
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(append(elfBytes, elfBytes...), 512)
		}
		return "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
	})
	c := &Debuginfod{URLs: []string{srv.URL() + "/good"}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: int64(len(elfBytes))}
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
	c = &Debuginfod{URLs: []string{"http://nrtabi:s3cret@" + u.Host + "/good"}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: int64(len(elfBytes))}
	assertCached(t, c, id, elfBytes)
	if heads := srv.Heads(); !strings.Contains(heads[len(heads)-1], "\r\nAuthorization: Basic bnJ0YWJpOnMzY3JldA==\r\n") {
		t.Errorf("the URL's credentials were not sent:\n%s", heads[len(heads)-1])
	}
	for kind, msg := range map[string]string{
		"badsize": `chunked body: chunk size line "zz" is not hex`,
		"bigsize": "is not 1 to 15 hex digits",
		"cut":     "connection closed before the chunk size line",
		"overcap": "more than the",
	} {
		cache := t.TempDir()
		c := &Debuginfod{URLs: []string{srv.URL() + "/" + kind}, CacheDir: cache, Timeout: 10 * time.Second, MaxBytes: int64(len(elfBytes)) + 100}
		_, err := c.Fetch(id)
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
	c := &Debuginfod{URLs: []string{srv.URL + "/hop/5"}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	assertCached(t, c, id, elfBytes)
	if hits.Load() != 6 {
		t.Fatalf("5 redirects: %d requests", hits.Load())
	}
	cache := t.TempDir()
	c = &Debuginfod{URLs: []string{srv.URL + "/hop/6"}, CacheDir: cache, Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	_, err := c.Fetch(id)
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
		return "HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n"
	})
	for kind, msg := range map[string]string{
		"ftp":        "redirect to ftp://127.0.0.1/x refused (http or https only)",
		"file":       "redirect to file:///etc/passwd refused (http or https only)",
		"nolocation": "HTTP 302 redirect without a Location",
	} {
		cache := t.TempDir()
		c := &Debuginfod{URLs: []string{raw.URL() + "/" + kind}, CacheDir: cache, Timeout: 10 * time.Second, MaxBytes: 1 << 20}
		if _, err := c.Fetch(id); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: want %q, got %v", kind, msg, err)
		}
		assertCacheEmpty(t, cache, id)
	}
}

// forwardProxy is an HTTP proxy on loopback: it takes absolute-form
// requests, forwards them, and records each request line and its
// Proxy-Authorization.
func forwardProxy(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI+" auth="+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		if !r.URL.IsAbs() {
			http.Error(w, "a proxy wants an absolute URL", http.StatusBadRequest)
			return
		}
		out, err := http.NewRequest(r.Method, r.URL.String(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		out.Header.Del("Proxy-Authorization")
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

// TestDebuginfodProxy: http_proxy (and HTTP_PROXY) send the request to the
// proxy in absolute form, with the proxy URL's credentials; no_proxy
// (names, suffixes, addresses, prefixes, *) goes direct; a proxy that does
// not answer is named with the variable that set it.
func TestDebuginfodProxy(t *testing.T) {
	elfBytes, id := servedLib(t)
	var hits atomic.Int32
	origin := hopServer(t, elfBytes, &hits)
	proxy, seen := forwardProxy(t)
	fetch := func() error {
		c := &Debuginfod{URLs: []string{origin.URL + "/hop/1"}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: 1 << 20}
		p, err := c.Fetch(id)
		if err == nil {
			if got, _ := os.ReadFile(p); !bytes.Equal(got, elfBytes) {
				t.Fatalf("through the proxy: %d bytes cached, %d served", len(got), len(elfBytes))
			}
		}
		return err
	}
	pu, _ := url.Parse(proxy.URL)
	t.Setenv("http_proxy", "http://nrtabi:s3cret@"+pu.Host)
	if err := fetch(); err != nil {
		t.Fatal(err)
	}
	// The redirect is followed through the proxy too.
	want := []string{
		"GET " + origin.URL + "/hop/1/buildid/" + id + "/debuginfo auth=Basic bnJ0YWJpOnMzY3JldA==",
		"GET " + origin.URL + "/hop/0/buildid/" + id + "/debuginfo auth=Basic bnJ0YWJpOnMzY3JldA==",
	}
	if got := seen(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the proxy saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, np := range []string{"127.0.0.1", "localhost,127.0.0.0/8", "*", "example.com, 127.0.0.1:" + strings.Split(pu.Host, ":")[1] + ",127.0.0.1"} {
		t.Setenv("no_proxy", np)
		before := len(seen())
		if err := fetch(); err != nil {
			t.Fatal(err)
		}
		if len(seen()) != before {
			t.Fatalf("no_proxy=%s: the request went through the proxy", np)
		}
	}
	t.Setenv("no_proxy", "example.com,10.0.0.0/8")
	t.Setenv("http_proxy", "")
	t.Setenv("HTTP_PROXY", proxy.URL)
	before := len(seen())
	if err := fetch(); err != nil {
		t.Fatal(err)
	}
	if len(seen()) != before+2 {
		t.Fatalf("HTTP_PROXY: the proxy saw %d requests, want 2", len(seen())-before)
	}
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("http_proxy", "127.0.0.1:1")
	if err := fetch(); err == nil || !strings.Contains(err.Error(), "proxy 127.0.0.1:1 (http_proxy): ") || !strings.Contains(err.Error(), "fix http_proxy, or add 127.0.0.1 to no_proxy") {
		t.Fatalf("a proxy that does not answer: %v", err)
	}
	t.Setenv("http_proxy", "http://user:pw@[bad")
	if err := fetch(); err == nil || !strings.Contains(err.Error(), "is not a proxy URL; fix or unset http_proxy") || strings.Contains(err.Error(), "pw") {
		t.Fatalf("a proxy that is not a URL: %v", err)
	}
}

func TestNoProxy(t *testing.T) {
	for _, c := range []struct {
		url, list string
		want      bool
	}{
		{"http://a.example.com/x", "example.com", true},
		{"http://a.example.com/x", ".example.com", true},
		{"http://example.com/x", ".example.com", true},
		{"http://badexample.com/x", "example.com", false},
		{"http://EXAMPLE.com./x", "example.com", true},
		{"http://example.com:8080/x", "example.com:8080", true},
		{"http://example.com:8080/x", "example.com:80", false},
		{"http://example.com/x", "example.com:80", true},
		{"http://10.1.2.3/x", "10.0.0.0/8", true},
		{"http://11.1.2.3/x", "10.0.0.0/8", false},
		{"http://[::1]:99/x", "::1", true},
		{"http://[::1]:99/x", "[::1]", true},
		{"http://[fe80::1]/x", "fe80::/10", true},
		{"http://127.0.0.1/x", "localhost", false},
		{"http://anything/x", "a, b ,*", true},
		{"http://anything/x", "", false},
	} {
		u, _ := url.Parse(c.url)
		if got := noProxy(u, c.list); got != c.want {
			t.Errorf("no_proxy=%q for %s: %v, want %v", c.list, c.url, got, c.want)
		}
	}
}

// TestDebuginfodMaxTime: a server that keeps sending, a byte at a time
// within the stall timeout, is stopped by DEBUGINFOD_MAXTIME, over either
// transport.
func TestDebuginfodMaxTime(t *testing.T) {
	_, id := servedLib(t)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
				needCurl(t)
				srv.Close()
				srv = httptest.NewTLSServer(handler)
				trustTLS(t, srv)
			}
			defer srv.Close()
			cache := t.TempDir()
			c := &Debuginfod{URLs: []string{srv.URL}, CacheDir: cache, Timeout: 10 * time.Second, MaxTime: time.Second, MaxBytes: 1 << 20}
			err := fetchWithin(t, c, id, time.Minute, "DEBUGINFOD_MAXTIME did not end the download")
			if err == nil || !strings.Contains(err.Error(), "not done in 1s (DEBUGINFOD_MAXTIME) after ") {
				t.Fatalf("want the MAXTIME error, got %v", err)
			}
			assertCacheEmpty(t, cache, id)
			t.Log(err)
		})
	}
}

// TestDebuginfodCurl: https:// goes through curl with the CA the user
// gives curl (CURL_CA_BUNDLE), as does an http:// server's redirect to
// https://, within the same 5 redirects; an untrusted certificate and a
// missing curl are named with their fix.
func TestDebuginfodCurl(t *testing.T) {
	needCurl(t)
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
	trustTLS(t, srv)
	c := &Debuginfod{URLs: []string{srv.URL}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	assertCached(t, c, id, elfBytes)
	if a := agent.Load().(string); !strings.HasPrefix(a, "nrtabi/") || !strings.HasSuffix(a, " identity ") {
		t.Errorf("curl sent User-Agent, Accept-Encoding and Authorization %q", a)
	}
	// A user and password in the URL reach the server (curl reads the URL
	// from its stdin, not from the command line).
	c = &Debuginfod{URLs: []string{strings.Replace(srv.URL, "https://", `https://nrtabi:s3%22c%5Cret@`, 1)}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	assertCached(t, c, id, elfBytes)
	if a := agent.Load().(string); !strings.HasSuffix(a, " identity Basic bnJ0YWJpOnMzImNccmV0") {
		t.Errorf("curl sent User-Agent, Accept-Encoding and Authorization %q", a)
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
	c = &Debuginfod{URLs: []string{redirect.URL + "/r/3"}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	assertCached(t, c, id, elfBytes)
	cache := t.TempDir()
	c = &Debuginfod{URLs: []string{redirect.URL + "/r/4"}, CacheDir: cache, Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	if _, err := c.Fetch(id); err == nil || !strings.Contains(err.Error(), "more than 5 redirects") {
		t.Fatalf("6 redirects across http and https: %v", err)
	}
	assertCacheEmpty(t, cache, id)

	// A certificate curl is not told to trust (httptest's servers all
	// share one, so another is made).
	writeOtherCA(t)
	c = &Debuginfod{URLs: []string{srv.URL}, CacheDir: t.TempDir(), Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	if _, err := c.Fetch(id); err == nil || !strings.Contains(err.Error(), srv.URL+"/buildid/") || !strings.Contains(err.Error(), "set CURL_CA_BUNDLE to its PEM file") {
		t.Fatalf("an untrusted certificate: %v", err)
	} else {
		t.Log(err)
	}

	// No curl on PATH.
	t.Setenv("PATH", t.TempDir())
	if _, err := c.Fetch(id); err == nil || !strings.Contains(err.Error(), "an https server needs curl on PATH (install curl), or use an http:// server") {
		t.Fatalf("no curl: %v", err)
	} else {
		t.Log(err)
	}
}

// TestDebuginfodCurlCap: curl is killed once what it passes on exceeds the
// cap, on a body of unknown length that would never end.
func TestDebuginfodCurlCap(t *testing.T) {
	needCurl(t)
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
	trustTLS(t, srv)
	cache := t.TempDir()
	c := &Debuginfod{URLs: []string{srv.URL}, CacheDir: cache, Timeout: 10 * time.Second, MaxBytes: 100 << 10}
	err := fetchWithin(t, c, id, time.Minute, "curl was not stopped at the cap")
	// Newer curl stops at --max-filesize itself ("over the cap").
	if err == nil || !strings.Contains(err.Error(), "more than the 102400-byte cap (DEBUGINFOD_MAXSIZE)") && !strings.Contains(err.Error(), "over the 102400-byte cap (DEBUGINFOD_MAXSIZE)") {
		t.Fatalf("want the cap error, got %v", err)
	}
	t.Log(err)
	select {
	case sent := <-gone:
		t.Logf("the server sent %d bytes before curl was gone", sent)
	case <-time.After(time.Minute):
		t.Fatal("the server is still sending a minute after Fetch returned: curl was left running")
	}
	assertCacheEmpty(t, cache, id)
}
