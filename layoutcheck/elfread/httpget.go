package elfread

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// The debuginfod client's http:// transport: one HTTP/1.1 GET per
// connection over package net. net/http (and crypto/tls with it) is not
// linked, because initialising it is the biggest part of every nrtabi
// command's start-up although only a download uses it; https:// goes
// through curl (curlget.go).

// maxRedirects is curl's --max-redirs for a download, and the client's own.
const maxRedirects = 5

// transfer is one download: its limits, where it has got to and what
// arrived.
type transfer struct {
	timeout  time.Duration // DEBUGINFOD_TIMEOUT: connect, and any wait for bytes
	maxTime  time.Duration // DEBUGINFOD_MAXTIME; 0: none
	deadline time.Time     // start + maxTime; zero: none
	body     capWriter
	at       *url.URL // the URL being fetched (after redirects)
	hops     int      // redirects followed
}

// Errors that end a transfer; download (debuginfod.go) words them.
var (
	errStalled = errors.New("stalled")   // no byte for the timeout
	errTimeUp  = errors.New("time up")   // the whole-download deadline passed
	errOverCap = errors.New("over cap")  // more bytes than the cap arrived
	errNoCurl  = errors.New("curl gone") // https:// without curl on PATH
)

// errCapLength: Content-Length (or curl's --max-filesize) over the cap.
type errCapLength struct{ n int64 }

func (e errCapLength) Error() string { return fmt.Sprintf("%d bytes", e.n) }

// capWriter passes at most max bytes to w and counts them.
type capWriter struct {
	w   io.Writer
	max int64
	n   int64
}

func (c *capWriter) Write(b []byte) (int, error) {
	if int64(len(b)) > c.max-c.n {
		return 0, errOverCap
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	if err != nil {
		err = fmt.Errorf("cache: %w", err)
	}
	return n, err
}

// get fetches u into t.body: http:// here (through an http:// proxy when
// the environment names one), https:// and other proxies through curl.
func (t *transfer) get(u *url.URL) error {
	for {
		t.at = u
		if u.Scheme == "https" {
			return t.curlGet(u)
		}
		proxy, proxyVar, err := httpProxyFor(u)
		if err != nil {
			return err
		}
		if proxy != nil && proxy.Scheme != "http" {
			// socks and https proxies: curl speaks them.
			return t.curlGet(u)
		}
		resp, br, conn, err := t.roundTrip(u, proxy, proxyVar)
		if err != nil {
			return err
		}
		if !resp.isRedirect() {
			err = t.readBody(resp, br)
			conn.Close()
			return err
		}
		conn.Close()
		if t.hops == maxRedirects {
			return fmt.Errorf("more than %d redirects; point DEBUGINFOD_URLS at the server the redirects lead to", maxRedirects)
		}
		if resp.Location == "" {
			return fmt.Errorf("HTTP %d redirect without a Location", resp.Status)
		}
		next, err := u.Parse(resp.Location)
		if err != nil {
			return fmt.Errorf("HTTP %d redirect to %s, which is not a URL", resp.Status, quoteShort([]byte(resp.Location)))
		}
		next.Fragment, next.RawFragment = "", ""
		if next.Scheme != "http" && next.Scheme != "https" || next.Host == "" {
			return fmt.Errorf("redirect to %s refused (http or https only)", next.Redacted())
		}
		t.hops++
		u = next
	}
}

// roundTrip sends the request and reads the response head.
func (t *transfer) roundTrip(u, proxy *url.URL, proxyVar string) (*httpResponse, *bufio.Reader, net.Conn, error) {
	addr := hostPort(u, "80")
	if proxy != nil {
		addr = hostPort(proxy, "1080")
	}
	conn, err := t.dial(addr)
	if err != nil {
		if proxy != nil {
			return nil, nil, nil, fmt.Errorf("proxy %s (%s): %v; fix %s, or add %s to no_proxy", addr, proxyVar, err, proxyVar, u.Hostname())
		}
		return nil, nil, nil, err
	}
	if err := t.writeRequest(conn, u, proxy); err != nil {
		conn.Close()
		return nil, nil, nil, err
	}
	br := bufio.NewReaderSize(conn, httpLineMax)
	resp, err := readResponse(br)
	if err != nil {
		conn.Close()
		return nil, nil, nil, err
	}
	return resp, br, conn, nil
}

// writeRequest sends the GET: origin-form to the server, absolute-form to a
// proxy. A URL's user and password go as Basic credentials to its own host
// only (a redirect elsewhere drops them, as url.Parse of a Location with a
// host does).
func (t *transfer) writeRequest(conn net.Conn, u, proxy *url.URL) error {
	var b strings.Builder
	target := u.RequestURI()
	if proxy != nil {
		abs := *u
		abs.User = nil
		target = abs.String()
	}
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\nAccept-Encoding: identity\r\nConnection: close\r\n", target, u.Host, userAgent())
	if u.User != nil {
		fmt.Fprintf(&b, "Authorization: Basic %s\r\n", basicAuth(u.User))
	}
	if proxy != nil && proxy.User != nil {
		fmt.Fprintf(&b, "Proxy-Authorization: Basic %s\r\n", basicAuth(proxy.User))
	}
	b.WriteString("\r\n")
	_, err := io.WriteString(conn, b.String())
	return err
}

func basicAuth(ui *url.Userinfo) string {
	pw, _ := ui.Password()
	return base64.StdEncoding.EncodeToString([]byte(ui.Username() + ":" + pw))
}

// readBody copies a 200 response's body into t.body; any other status is
// an error that says what it means.
func (t *transfer) readBody(resp *httpResponse, br *bufio.Reader) error {
	if resp.Status != 200 {
		return httpStatusError(resp.Status, resp.Reason)
	}
	if resp.Length > t.body.max {
		return errCapLength{resp.Length}
	}
	_, err := io.Copy(&t.body, httpBody(br, resp))
	return err
}

// httpStatusError words a status other than 200 with what to do about it.
func httpStatusError(status int, reason string) error {
	s := fmt.Sprintf("HTTP %d", status)
	if reason != "" {
		s = fmt.Sprintf("%d %s", status, reason)
	}
	switch {
	case status == 404:
		return fmt.Errorf("%s: the server has no debug file for this build-id; try another server in DEBUGINFOD_URLS", s)
	case status == 407:
		return fmt.Errorf("%s: the proxy wants credentials; put them in the proxy URL (http://USER:PASSWORD@HOST:PORT)", s)
	case status >= 500:
		return fmt.Errorf("%s: a server error; try again later or another server in DEBUGINFOD_URLS", s)
	}
	return fmt.Errorf("%s: not a debug file; check the server URL in DEBUGINFOD_URLS", s)
}

// dial connects within the timeout (and the whole-download deadline); the
// connection's reads and writes then wait at most the timeout for a byte.
func (t *transfer) dial(addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: t.timeout, Deadline: t.deadline}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		if !t.deadline.IsZero() && !time.Now().Before(t.deadline) {
			return nil, errTimeUp
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("could not connect to %s in %v (DEBUGINFOD_TIMEOUT); is the server up and reachable?", addr, t.timeout)
		}
		return nil, fmt.Errorf("could not connect to %s: %v; is the server up and reachable?", addr, opErr(err))
	}
	return &stallConn{Conn: conn, t: t}, nil
}

// opErr drops net.OpError's "dial tcp ADDR:" prefix, which the message
// already says.
func opErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}

// stallConn sets each read's and write's deadline to the timeout from now,
// or to the whole download's deadline when that is earlier, and says which
// one passed.
type stallConn struct {
	net.Conn
	t *transfer
}

func (c *stallConn) limit() (time.Time, error) {
	dl, why := time.Now().Add(c.t.timeout), errStalled
	if !c.t.deadline.IsZero() && c.t.deadline.Before(dl) {
		dl, why = c.t.deadline, errTimeUp
	}
	return dl, why
}

func (c *stallConn) Read(b []byte) (int, error) {
	dl, why := c.limit()
	if err := c.Conn.SetReadDeadline(dl); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = why
	}
	return n, err
}

func (c *stallConn) Write(b []byte) (int, error) {
	dl, why := c.limit()
	if err := c.Conn.SetWriteDeadline(dl); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = why
	}
	return n, err
}

// hostPort is u's host and port, the scheme's default port when none.
func hostPort(u *url.URL, port string) string {
	if p := u.Port(); p != "" {
		port = p
	}
	return net.JoinHostPort(u.Hostname(), port)
}
