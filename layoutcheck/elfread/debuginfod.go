package elfread

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Debuginfod is a client of debuginfod servers with the conventions of
// elfutils' client: DEBUGINFOD_URLS (space-separated server URLs),
// DEBUGINFOD_CACHE_PATH (default: the user cache directory's
// debuginfod_client, files at <cache>/<build-id>/debuginfo),
// DEBUGINFOD_TIMEOUT (seconds to connect, to get the response headers, and
// that the body may go without a byte; default 90), DEBUGINFOD_MAXTIME
// (seconds for a whole download; default none) and DEBUGINFOD_MAXSIZE
// (bytes; default DefaultDebuginfodMax).
type Debuginfod struct {
	URLs     []string
	CacheDir string
	Timeout  time.Duration
	MaxTime  time.Duration // 0: no bound on the whole download
	MaxBytes int64
}

// DefaultDebuginfodMax bounds a download when DEBUGINFOD_MAXSIZE is unset:
// the largest debug files distributions ship (libLLVM's) are under 2 GiB.
const DefaultDebuginfodMax = 2 << 30

// DebuginfodFromEnv builds the client the environment configures; nil when
// DEBUGINFOD_URLS is unset or empty.
func DebuginfodFromEnv() *Debuginfod {
	urls := strings.Fields(os.Getenv("DEBUGINFOD_URLS"))
	if len(urls) == 0 {
		return nil
	}
	c := &Debuginfod{URLs: urls, Timeout: 90 * time.Second, MaxBytes: DefaultDebuginfodMax}
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

// Fetch returns the path of the debug file with this build-id: from the
// cache when it is there and carries the build-id, else downloaded from
// each server in turn into the cache (a temporary file renamed into place
// once its build-id is checked).
func (c *Debuginfod) Fetch(buildID string) (string, error) {
	if !validBuildID(buildID) {
		return "", fmt.Errorf("build-id %q is not a hex build-id", buildID)
	}
	if c.CacheDir == "" {
		return "", errors.New("no cache directory (set DEBUGINFOD_CACHE_PATH)")
	}
	dir := filepath.Join(c.CacheDir, buildID)
	dst := filepath.Join(dir, "debuginfo")
	if err := checkBuildID(dst, buildID); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cache: %v", err)
	}
	var errs []string
	for _, u := range c.URLs {
		err := c.download(u, buildID, dir, dst)
		if err == nil {
			return dst, nil
		}
		errs = append(errs, err.Error())
	}
	return "", errors.New(strings.Join(errs, "; "))
}

func (c *Debuginfod) download(server, buildID, dir, dst string) error {
	base, err := url.Parse(strings.TrimRight(server, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("%s: not an http or https URL", server)
	}
	src := base.String() + "/buildid/" + buildID + "/debuginfo"
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 90 * time.Second
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout}).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to %s refused (http or https only)", req.URL.Scheme)
		}
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	if c.MaxTime > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), c.MaxTime)
	}
	defer cancel()
	// A body that stops arriving ends the download after the timeout.
	var stalled atomic.Bool
	watchdog := time.AfterFunc(timeout, func() { stalled.Store(true); cancel() })
	defer watchdog.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return fmt.Errorf("%s: %v", src, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %v", src, err)
	}
	defer resp.Body.Close()
	watchdog.Reset(timeout)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", src, resp.Status)
	}
	max := c.MaxBytes
	if max <= 0 {
		max = DefaultDebuginfodMax
	}
	if resp.ContentLength > max {
		return fmt.Errorf("%s: %d bytes, over the %d-byte cap (DEBUGINFOD_MAXSIZE)", src, resp.ContentLength, max)
	}
	tmp, err := os.CreateTemp(dir, ".debuginfo-*.tmp")
	if err != nil {
		return fmt.Errorf("cache: %v", err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing left to remove
	n, err := io.Copy(tmp, io.LimitReader(progress{resp.Body, func() { watchdog.Reset(timeout) }}, max+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil && stalled.Load():
		return fmt.Errorf("%s: no data for %v (DEBUGINFOD_TIMEOUT) after %d bytes", src, timeout, n)
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%s: not done in %v (DEBUGINFOD_MAXTIME) after %d bytes", src, c.MaxTime, n)
	case err != nil:
		return fmt.Errorf("%s: %v", src, err)
	case n > max:
		return fmt.Errorf("%s: more than the %d-byte cap (DEBUGINFOD_MAXSIZE)", src, max)
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		return fmt.Errorf("%s: %d of %d bytes arrived", src, n, resp.ContentLength)
	}
	if err := checkBuildID(tmp.Name(), buildID); err != nil {
		return fmt.Errorf("%s: what arrived is refused: %s", src, errMsg(err))
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("cache: %v", err)
	}
	return nil
}

// progress calls tick on every read that delivers bytes.
type progress struct {
	r    io.Reader
	tick func()
}

func (p progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.tick()
	}
	return n, err
}

// checkBuildID opens an ELF file and compares its build-id.
func checkBuildID(path, want string) error {
	o, err := Open(path)
	if err != nil {
		return err
	}
	defer o.Close()
	if o.BuildID != want {
		return fmt.Errorf("what arrived has build-id %q, not %s", o.BuildID, want)
	}
	return nil
}
