package elfread

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Debuginfod is a client of debuginfod servers with the conventions of
// elfutils' client: DEBUGINFOD_URLS (space-separated server URLs),
// DEBUGINFOD_CACHE_PATH (default: the user cache directory's
// debuginfod_client, files at <cache>/<build-id>/debuginfo),
// DEBUGINFOD_TIMEOUT (seconds to connect, to get the response headers, and
// that the body may go without a byte; default 90), DEBUGINFOD_MAXTIME
// (seconds for a whole download; default none) and DEBUGINFOD_MAXSIZE
// (bytes; default DefaultDebuginfodMax). http:// servers are fetched by the
// client's own HTTP/1.1 GET (httpget.go), https:// ones through curl
// (curlget.go), so that nrtabi links no net/http or crypto/tls.
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
		return fmt.Errorf("%s: not an http or https URL; DEBUGINFOD_URLS takes http:// and https:// server URLs", redactUserinfo(server))
	}
	src, err := url.Parse(base.String() + "/buildid/" + buildID + "/debuginfo")
	if err != nil {
		return fmt.Errorf("%s: not an http or https URL; DEBUGINFOD_URLS takes http:// and https:// server URLs", redactUserinfo(server))
	}
	t := &transfer{timeout: c.Timeout, maxTime: c.MaxTime, body: capWriter{max: c.MaxBytes}}
	if t.timeout <= 0 {
		t.timeout = 90 * time.Second
	}
	if t.body.max <= 0 {
		t.body.max = DefaultDebuginfodMax
	}
	if c.MaxTime > 0 {
		t.deadline = time.Now().Add(c.MaxTime)
	}
	tmp, err := os.CreateTemp(dir, ".debuginfo-*.tmp")
	if err != nil {
		return fmt.Errorf("cache: %v", err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing left to remove
	t.body.w = tmp
	err = t.get(src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	where := src.Redacted()
	if t.hops > 0 {
		where += " (redirected to " + t.at.Redacted() + ")"
	}
	if err != nil {
		return fmt.Errorf("%s: %s", where, t.wordError(err))
	}
	if err := checkBuildID(tmp.Name(), buildID); err != nil {
		return fmt.Errorf("%s: what arrived is refused: %s", where, errMsg(err))
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("cache: %v", err)
	}
	return nil
}

// wordError says what ended a transfer and which variable changes it.
func (t *transfer) wordError(err error) string {
	var capLen errCapLength
	switch {
	case errors.Is(err, errStalled):
		return fmt.Sprintf("no data for %v (DEBUGINFOD_TIMEOUT) after %d bytes; raise DEBUGINFOD_TIMEOUT or try again", t.timeout, t.body.n)
	case errors.Is(err, errTimeUp):
		return fmt.Sprintf("not done in %v (DEBUGINFOD_MAXTIME) after %d bytes; raise DEBUGINFOD_MAXTIME", t.maxTime, t.body.n)
	case errors.Is(err, errOverCap):
		return fmt.Sprintf("more than the %d-byte cap (DEBUGINFOD_MAXSIZE); raise DEBUGINFOD_MAXSIZE if the file is that large", t.body.max)
	case errors.As(err, &capLen) && capLen.n >= 0:
		return fmt.Sprintf("%d bytes, over the %d-byte cap (DEBUGINFOD_MAXSIZE); raise DEBUGINFOD_MAXSIZE if the file is that large", capLen.n, t.body.max)
	case errors.As(err, &capLen):
		return fmt.Sprintf("the file is over the %d-byte cap (DEBUGINFOD_MAXSIZE) by its Content-Length (curl --max-filesize); raise DEBUGINFOD_MAXSIZE if the file is that large", t.body.max)
	case errors.Is(err, errNoCurl):
		return "an https server needs curl on PATH (install curl), or use an http:// server in DEBUGINFOD_URLS"
	}
	return oneLine.Replace(err.Error())
}

// userAgent is nrtabi/VERSION, the module version the build recorded.
func userAgent() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "nrtabi/" + v
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
