// Package debuginfod fetches debug files by build-id from debuginfod
// servers, with the conventions of elfutils' client: DEBUGINFOD_URLS
// (space-separated server URLs), DEBUGINFOD_CACHE_PATH (default: the user
// cache directory's debuginfod_client, files at <cache>/<build-id>/<kind>),
// DEBUGINFOD_TIMEOUT (seconds to connect, to get the response head, and
// that the body may go without a byte; default 90), DEBUGINFOD_MAXTIME
// (seconds for a whole download; default none) and DEBUGINFOD_MAXSIZE
// (bytes; default DefaultMaxBytes).
//
// HTTP goes through net/http: http:// and https:// alike, through the proxy
// http.ProxyFromEnvironment names (http_proxy, https_proxy, no_proxy), with
// the system's CA certificates (SSL_CERT_FILE and SSL_CERT_DIR override
// them). What a server sends is input: the size cap, the stall timeout and
// the total deadline hold whatever it does, at most five redirects are
// followed and only to http or https, and a file reaches the cache only
// after the caller's check of its build-id passes (written to a temporary
// file, renamed into place). Nothing is written through a symbolic link
// under the cache root, and a failed download leaves nothing behind.
//
// Where it sits in the search for debug files:
// docs/layoutcheck.md#how-debug-info-is-found.
package debuginfod

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/internal/regfile"
)

// Kind is what is fetched for a build-id: the last element of the server's
// /buildid/<id>/<kind> path and the cache file's name.
type Kind string

// The kinds whose build-id the fetched file carries, so that the check
// before caching applies (a source file, the third kind debuginfod serves,
// carries none and is not fetched here).
const (
	Debuginfo  Kind = "debuginfo"
	Executable Kind = "executable"
)

// Client is the configuration of downloads; FromEnv builds it from the
// environment.
type Client struct {
	URLs     []string
	CacheDir string
	Timeout  time.Duration // 0: 90 s
	MaxTime  time.Duration // 0: no bound on the whole download
	MaxBytes int64         // 0: DefaultMaxBytes
	// Verify reports whether the file at path carries buildID; nil makes
	// every Fetch fail, as an unchecked download would be cached. Its
	// error is one line without the path (Fetch names the URL).
	Verify func(path, buildID string) error

	// rootCAs replaces the system's CA certificates; tests set it to trust
	// their own TLS server.
	rootCAs *x509.CertPool
}

// DefaultMaxBytes bounds a download when DEBUGINFOD_MAXSIZE is unset: the
// largest debug files distributions ship (libLLVM's) are under 2 GiB.
const DefaultMaxBytes = 2 << 30

// defaultTimeout is elfutils' default DEBUGINFOD_TIMEOUT.
const defaultTimeout = 90 * time.Second

// maxRedirects is the number of redirects a download follows.
const maxRedirects = 5

// maxHeadBytes bounds a response head (net/http's default is 1 MiB).
const maxHeadBytes = 32 << 10

// FromEnv builds the client the environment configures, with verify as its
// build-id check; nil when DEBUGINFOD_URLS is unset or empty.
func FromEnv(verify func(path, buildID string) error) *Client {
	urls := strings.Fields(os.Getenv("DEBUGINFOD_URLS"))
	if len(urls) == 0 {
		return nil
	}
	c := &Client{URLs: urls, Timeout: defaultTimeout, MaxBytes: DefaultMaxBytes, Verify: verify}
	c.CacheDir = os.Getenv("DEBUGINFOD_CACHE_PATH")
	if c.CacheDir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			c.CacheDir = filepath.Join(d, "debuginfod_client")
		}
	}
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv("DEBUGINFOD_TIMEOUT"))); err == nil && v > 0 {
		c.Timeout = time.Duration(v) * time.Second
	}
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv("DEBUGINFOD_MAXTIME"))); err == nil && v > 0 {
		c.MaxTime = time.Duration(v) * time.Second
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(os.Getenv("DEBUGINFOD_MAXSIZE")), 10, 64); err == nil && v > 0 {
		c.MaxBytes = v
	}
	return c
}

// validBuildID: lower-case hex, whole bytes, 2 to 64 bytes. Anything else
// never reaches a URL or a cache path.
func validBuildID(id string) bool {
	if len(id) < 4 || len(id) > 128 || len(id)%2 != 0 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Fetch returns the path of the file of this kind with this build-id: from
// the cache when it is there and passes Verify, else downloaded from every
// server at once, as elfutils' client queries them: the first file that
// passes Verify wins and the other downloads are cancelled. DEBUGINFOD_MAXTIME
// is one deadline for the whole Fetch, whatever the number of servers; a
// silent server costs its DEBUGINFOD_TIMEOUT once, side by side with the
// others, never one after another. The error of a failure names every
// server's, in the order DEBUGINFOD_URLS lists them.
func (c *Client) Fetch(ctx context.Context, buildID string, kind Kind) (string, error) {
	if !validBuildID(buildID) {
		return "", fmt.Errorf("build-id %q is not a hex build-id", buildID)
	}
	if kind != Debuginfo && kind != Executable {
		return "", fmt.Errorf("kind %q: only %s and %s carry a build-id to check", kind, Debuginfo, Executable)
	}
	if c.Verify == nil {
		return "", errors.New("debuginfod: no build-id check (Client.Verify) configured; nothing is fetched unchecked")
	}
	if c.CacheDir == "" {
		return "", errors.New("no cache directory (set DEBUGINFOD_CACHE_PATH)")
	}
	cd, err := openCacheDir(c.CacheDir, buildID)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cd.path, string(kind))
	ok, err := cd.cached(string(kind))
	if err != nil {
		cd.close(false)
		return "", err
	}
	if ok && c.Verify(dst, buildID) == nil {
		cd.close(true)
		return dst, nil
	}
	caller := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.MaxTime > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, c.MaxTime, errTimeUp)
		defer stop()
	}
	type answer struct {
		i   int
		tmp string // a verified download, not yet in place
		err error
	}
	answers := make(chan answer, len(c.URLs))
	for i, u := range c.URLs {
		go func() {
			tmp, err := c.download(ctx, u, buildID, kind, cd)
			answers <- answer{i, tmp, err}
		}()
	}
	errs := make([]string, len(c.URLs))
	won := false
	var placeErr error
	for range c.URLs {
		a := <-answers
		switch {
		case a.err == nil && !won:
			// A rename replaces a link at dst, never follows it.
			if err := cd.dir.Rename(a.tmp, string(kind)); err != nil {
				cd.dir.Remove(a.tmp)
				placeErr = fmt.Errorf("cache: %w", err)
				continue
			}
			won = true
			cancel() // the first good answer wins: the others are stopped
		case a.err == nil:
			cd.dir.Remove(a.tmp)
		default:
			errs[a.i] = a.err.Error()
		}
	}
	if won {
		cd.close(true)
		return dst, nil
	}
	cd.close(false)
	if placeErr != nil {
		return "", placeErr
	}
	if caller.Err() != nil {
		// The server's words are text by now (see word); what a caller
		// may test for is the cancellation.
		return "", fmt.Errorf("%s: %w", strings.Join(errs, "; "), caller.Err())
	}
	// One line per server, joined by "; " (errors.Join would break the line);
	// each is already text, so nothing is left to unwrap.
	return "", errors.New(strings.Join(errs, "; "))
}

// cacheDir is one build-id's directory in the cache, held open: every file
// operation goes through dir, an os.Root on the directory itself, so none
// can land outside it whatever is renamed or linked meanwhile.
type cacheDir struct {
	root        *os.Root // the cache root (DEBUGINFOD_CACHE_PATH, trusted as named)
	dir         *os.Root // root/<build-id>, a real directory
	path        string   // root/<build-id>, for messages and Verify
	createdDir  bool     // this Fetch made root/<build-id>
	createdRoot string   // the cache root when this Fetch made it, else ""
}

// openCacheDir opens (making it if missing) the build-id directory under
// the cache root. The root may be a symbolic link (it is the user's
// setting); nothing under it may be: a download written through a linked
// build-id directory would land outside the cache (docs/layoutcheck.md#how-debug-info-is-found).
func openCacheDir(cacheRoot, buildID string) (_ *cacheDir, err error) {
	cd := &cacheDir{path: filepath.Join(cacheRoot, buildID)}
	if _, err := os.Stat(cacheRoot); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		cd.createdRoot = cacheRoot
	}
	defer func() {
		if err != nil {
			cd.close(false)
		}
	}()
	if cd.root, err = openRoot(cacheRoot); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	st, err := cd.root.Lstat(buildID)
	if errors.Is(err, fs.ErrNotExist) {
		if err = cd.root.Mkdir(buildID, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("cache: %w", err)
		}
		cd.createdDir = err == nil
		st, err = cd.root.Lstat(buildID)
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("cache: %s is %s, not a directory; the cache is written only into real directories: remove it", cd.path, regfile.Kind(st.Mode()))
	}
	if cd.dir, err = cd.root.OpenRoot(buildID); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	// What was opened is what was checked: no link swapped in between.
	if now, err := cd.dir.Lstat("."); err != nil || !os.SameFile(now, st) {
		return nil, fmt.Errorf("cache: %s changed while it was opened; try again", cd.path)
	}
	return cd, nil
}

// cached reports whether the directory holds a regular file name; a
// symbolic link, a FIFO or anything else there is refused by name. The
// file is opened without following a link and without blocking
// (O_NOFOLLOW|O_NONBLOCK: a FIFO swapped in after the Lstat would
// otherwise wait for a writer forever), and what was opened is checked.
func (cd *cacheDir) cached(name string) (bool, error) {
	st, err := cd.dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("cache: %w", err)
	case !st.Mode().IsRegular():
		return false, fmt.Errorf("cache: %s is %s, not a regular file; the cache holds only files it wrote: remove it", filepath.Join(cd.path, name), regfile.Kind(st.Mode()))
	}
	f, err := cd.dir.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, fmt.Errorf("cache: %s changed while it was opened (%w); remove it", filepath.Join(cd.path, name), err)
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !now.Mode().IsRegular() || !os.SameFile(now, st) {
		return false, fmt.Errorf("cache: %s changed while it was opened; remove it", filepath.Join(cd.path, name))
	}
	return true, nil
}

// openRoot opens the cache root, which may be a symbolic link (the user's
// setting) but must be a directory: it is opened first without blocking
// and as a directory only (a FIFO named as the cache would block
// os.OpenRoot's open forever), and the os.Root is made from that very
// directory (/proc/self/fd), so nothing swapped in meanwhile is opened.
func openRoot(path string) (*os.Root, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ENOTDIR) {
		what := "something else"
		if st, serr := os.Stat(path); serr == nil {
			what = regfile.Kind(st.Mode())
		}
		return nil, fmt.Errorf("%s is %s, not a directory; DEBUGINFOD_CACHE_PATH names a directory", path, what)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	r, err := os.OpenRoot(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (is /proc mounted?)", path, err)
	}
	return r, nil
}

// close releases the directory; after a failure (ok false) it also removes
// the directories this Fetch made, if they are still empty, so a failed
// download leaves nothing behind.
func (cd *cacheDir) close(ok bool) {
	if cd.dir != nil {
		cd.dir.Close()
	}
	if !ok && cd.createdDir && cd.root != nil {
		cd.root.Remove(filepath.Base(cd.path)) // fails, as it should, unless empty
	}
	if cd.root != nil {
		cd.root.Close()
	}
	if !ok && cd.createdRoot != "" {
		os.Remove(cd.createdRoot)
	}
}

// Errors that end a transfer; transfer.word says what they mean.
var (
	errStalled = errors.New("stalled")  // no byte for the timeout
	errTimeUp  = errors.New("time up")  // the whole-download deadline passed
	errOverCap = errors.New("over cap") // more bytes than the cap arrived
)

// errCapLength: a Content-Length over the cap.
type errCapLength struct{ n int64 }

func (e errCapLength) Error() string { return fmt.Sprintf("%d bytes", e.n) }

// errRedirect: a redirect refused (not http or https, or one too many).
type errRedirect struct{ msg string }

func (e errRedirect) Error() string { return e.msg }

// transfer is one download: its limits, where it has got to and what
// arrived.
type transfer struct {
	timeout, maxTime time.Duration
	max              int64
	n                int64    // bytes written to the cache file
	at               *url.URL // the URL fetched last (after redirects)
	hops             int      // redirects followed
}

// download fetches from one server into a temporary file of the build-id
// directory and verifies it; it returns the file's name, for Fetch to put
// in place, or an error naming the server (and nothing left behind).
func (c *Client) download(ctx context.Context, server, buildID string, kind Kind, cd *cacheDir) (string, error) {
	notURL := fmt.Errorf("%s: not an http or https URL; DEBUGINFOD_URLS takes http:// and https:// server URLs", redactUserinfo(server))
	base, err := url.Parse(strings.TrimRight(server, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return "", notURL
	}
	src, err := url.Parse(base.String() + "/buildid/" + buildID + "/" + string(kind))
	if err != nil {
		return "", notURL
	}
	t := &transfer{timeout: c.Timeout, maxTime: c.MaxTime, max: c.MaxBytes, at: src}
	if t.timeout <= 0 {
		t.timeout = defaultTimeout
	}
	if t.max <= 0 {
		t.max = DefaultMaxBytes
	}
	tmp, tmpName, err := cd.createTemp(string(kind))
	if err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	err = c.get(ctx, t, src, tmp)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("cache: %w", cerr)
	}
	where := src.Redacted()
	if t.hops > 0 {
		where += " (redirected to " + t.at.Redacted() + ")"
	}
	if err == nil {
		if verr := c.Verify(filepath.Join(cd.path, tmpName), buildID); verr != nil {
			// Flattened on purpose: the refusal names bytes the server
			// sent, which must stay one line; no caller tests the
			// reader's error type.
			err = fmt.Errorf("what arrived is refused: %s", oneLine(verr.Error()))
			cd.dir.Remove(tmpName)
			return "", fmt.Errorf("%s: %s", where, err.Error())
		}
		return tmpName, nil
	}
	cd.dir.Remove(tmpName)
	return "", fmt.Errorf("%s: %s", where, t.word(err))
}

// createTemp makes a new file in the build-id directory (O_EXCL: never an
// existing file or a link), named like os.CreateTemp's.
func (cd *cacheDir) createTemp(kind string) (*os.File, string, error) {
	for range 100 {
		var r [8]byte
		rand.Read(r[:])
		name := "." + kind + "-" + hex.EncodeToString(r[:]) + ".tmp"
		f, err := cd.dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("%s: no free temporary file name", cd.path)
}

// get fetches src into w within t's limits. The stall timeout is a timer
// reset by every read that brings bytes, and cancels the request when it
// fires; DEBUGINFOD_MAXTIME is the context's deadline (set by Fetch, one
// for every server), so it bounds the connect, the TLS handshake, the head
// and the body together.
func (c *Client) get(ctx context.Context, t *transfer, src *url.URL, w io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: t.timeout}).DialContext,
		TLSHandshakeTimeout:    t.timeout,
		ResponseHeaderTimeout:  t.timeout,
		MaxResponseHeaderBytes: maxHeadBytes,
		// The file is wanted as it is: a body the transport inflated
		// would escape the cap on what arrives.
		DisableCompression: true,
		DisableKeepAlives:  true,
		ForceAttemptHTTP2:  true,
	}
	if c.rootCAs != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: c.rootCAs}
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		u := req.URL
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return errRedirect{fmt.Sprintf("redirect to %s refused (http or https only)", u.Redacted())}
		}
		if len(via) > maxRedirects {
			return errRedirect{fmt.Sprintf("more than %d redirects; point DEBUGINFOD_URLS at the server the redirects lead to", maxRedirects)}
		}
		t.at, t.hops = u, len(via)
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", userAgent())
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		return cause(ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		// A redirect the client did not follow has no Location.
		return fmt.Errorf("HTTP %d redirect without a Location", resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return statusError(resp.StatusCode, strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode))))
	case resp.ContentLength > t.max:
		return errCapLength{resp.ContentLength}
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return fmt.Errorf("Content-Encoding %q although the request asked for identity", shorten(ce))
	}
	stall := time.AfterFunc(t.timeout, func() { cancel(errStalled) })
	defer stall.Stop()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			stall.Reset(t.timeout)
			if int64(n) > t.max-t.n {
				return errOverCap
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return fmt.Errorf("cache: %w", err)
			}
			t.n += int64(n)
		}
		if rerr == io.EOF {
			// A body cut when the context ended can read as a clean end
			// (over TLS, racing the close); the deadline decides.
			if c := context.Cause(ctx); c != nil {
				return cause(ctx, c)
			}
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("the body ended after %d bytes: %w", t.n, cause(ctx, rerr))
		}
	}
}

// cause is the reason ctx was cancelled (stall, MAXTIME) when it was, else
// err.
func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && (errors.Is(c, errStalled) || errors.Is(c, errTimeUp)) {
		return c
	}
	return err
}

// word says what ended a transfer and which variable changes it.
func (t *transfer) word(err error) string {
	var (
		capLen  errCapLength
		redir   errRedirect
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		host    x509.HostnameError
		record  tls.RecordHeaderError
		opErr   *net.OpError
		netErr  net.Error
	)
	switch {
	case errors.Is(err, errStalled):
		return fmt.Sprintf("no data for %v (DEBUGINFOD_TIMEOUT) after %d bytes; raise DEBUGINFOD_TIMEOUT or try again", t.timeout, t.n)
	case errors.Is(err, errTimeUp):
		return fmt.Sprintf("not done in %v (DEBUGINFOD_MAXTIME) after %d bytes; raise DEBUGINFOD_MAXTIME", t.maxTime, t.n)
	case errors.Is(err, errOverCap):
		return fmt.Sprintf("more than the %d-byte cap (DEBUGINFOD_MAXSIZE); raise DEBUGINFOD_MAXSIZE if the file is that large", t.max)
	case errors.As(err, &capLen):
		return fmt.Sprintf("%d bytes, over the %d-byte cap (DEBUGINFOD_MAXSIZE); raise DEBUGINFOD_MAXSIZE if the file is that large", capLen.n, t.max)
	case errors.As(err, &redir):
		return redir.msg
	case errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &host), errors.As(err, &record):
		return fmt.Sprintf("TLS: %s; if the server's certificate is from a private CA, set SSL_CERT_FILE to its PEM file, else install ca-certificates", oneLine(unwrapURL(err).Error()))
	case errors.As(err, &opErr) && opErr.Op == "proxyconnect":
		// The dial's own OpError inside names the proxy's address.
		proxy, why := "", opErr.Err
		var dial *net.OpError
		if errors.As(opErr.Err, &dial) && dial.Addr != nil {
			proxy, why = " "+dial.Addr.String(), dial.Err
		}
		return fmt.Sprintf("the proxy%s: %s; fix http_proxy or https_proxy, or add %s to no_proxy", proxy, oneLine(why.Error()), t.at.Hostname())
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return fmt.Sprintf("could not connect to %s: %s; is the server up and reachable?", t.at.Host, oneLine(opErr.Err.Error()))
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no answer in %v (DEBUGINFOD_TIMEOUT): %s; is the server up and reachable?", t.timeout, oneLine(unwrapURL(err).Error()))
	}
	return oneLine(unwrapURL(err).Error())
}

// unwrapURL drops net/http's `Get "URL": ` prefix: the message names the
// URL already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusError words a status other than 200 with what to do about it.
func statusError(status int, reason string) error {
	s := fmt.Sprintf("HTTP %d", status)
	if reason != "" {
		s = fmt.Sprintf("%d %s", status, shorten(reason))
	}
	switch {
	case status == http.StatusNotFound:
		return fmt.Errorf("%s: the server has no debug file for this build-id; try another server in DEBUGINFOD_URLS", s)
	case status == http.StatusProxyAuthRequired:
		return fmt.Errorf("%s: the proxy wants credentials; put them in the proxy URL (http://USER:PASSWORD@HOST:PORT)", s)
	case status >= 500:
		return fmt.Errorf("%s: a server error; try again later or another server in DEBUGINFOD_URLS", s)
	}
	return fmt.Errorf("%s: not a debug file; check the server URL in DEBUGINFOD_URLS", s)
}

// shorten keeps what a server sent to 60 bytes, so an error stays one
// short line.
func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// userAgent is nrtabi/VERSION, the module version the build recorded.
func userAgent() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "nrtabi/" + v
}

// redactUserinfo hides a user and password in a server URL named in an
// error, whether or not it parses.
func redactUserinfo(v string) string {
	at := strings.LastIndex(v, "@")
	if at < 0 {
		return v
	}
	from := 0
	if i := strings.Index(v, "://"); i >= 0 && i < at {
		from = i + 3
	}
	return v[:from] + "xxxxx" + v[at:]
}

// oneLine puts a message on one line, its line breaks written as \n and
// \r. A function, not a strings.Replacer made at init: the package's init
// runs in every command (docs/benchmarks.md#start-up-2026-12-04).
func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", `\n`), "\r", `\r`)
}
