package elfread

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The debuginfod client's https:// transport (and http:// through a socks or
// https proxy): curl, as elfutils' own client uses libcurl, so the proxy
// (https_proxy, all_proxy, no_proxy) and CA (CURL_CA_BUNDLE, SSL_CERT_FILE)
// variables users set for it apply. Its flags give the in-process client's
// semantics; its output goes through the same size cap, and curl is killed
// when the cap is passed (curl 7.88's --max-filesize does not stop a body
// of unknown length).

// curlArgs are curl's flags for fetching u with this many redirects left.
// --disable (first) keeps a ~/.curlrc from changing what is written.
func (t *transfer) curlArgs(u *url.URL, redirects int) []string {
	speedTime := int(math.Ceil(t.timeout.Seconds()))
	args := []string{"--disable", "--fail", "-sS", "--location", "--max-redirs", strconv.Itoa(redirects),
		"--proto", "=http,https", "--proto-redir", "=http,https",
		"--connect-timeout", seconds(t.timeout),
		"--speed-limit", "1", "--speed-time", strconv.Itoa(max(speedTime, 1)),
		"--max-filesize", strconv.FormatInt(t.body.max, 10),
		"-H", "Accept-Encoding: identity", "-A", userAgent(), "-o", "-"}
	if !t.deadline.IsZero() {
		args = append(args, "--max-time", seconds(time.Until(t.deadline)))
	}
	// The URL (which may carry a user and password) is read from stdin as
	// curl configuration, so it never shows in the process list.
	return append(args, "--config", "-")
}

// curlConfig is the configuration curl reads from stdin: the URL, quoted
// as curl's config syntax wants.
func curlConfig(u *url.URL) string {
	return "url = \"" + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(u.String()) + "\"\n"
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(max(d.Seconds(), 0.001), 'f', 3, 64)
}

// curlGet runs curl on u and streams its output into t.body.
func (t *transfer) curlGet(u *url.URL) error {
	bin, err := exec.LookPath("curl")
	if err != nil {
		return errNoCurl
	}
	if !t.deadline.IsZero() && !time.Now().Before(t.deadline) {
		return errTimeUp
	}
	cmd := exec.Command(bin, t.curlArgs(u, maxRedirects-t.hops)...)
	cmd.Stdin = strings.NewReader(curlConfig(u))
	var stderr tailBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("curl: %v", err)
	}
	_, copyErr := io.Copy(&t.body, out)
	if copyErr != nil {
		// Over the cap, or the cache file could not be written: curl
		// would go on downloading, so it is stopped here.
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	if copyErr != nil {
		return copyErr
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		return t.curlError(ee.ExitCode(), stderr.curlLine())
	}
	if waitErr != nil {
		return fmt.Errorf("curl: %v", waitErr)
	}
	return nil
}

// curlError turns curl's exit status and its last line on stderr into the
// error the in-process client gives for the same failure.
func (t *transfer) curlError(code int, msg string) error {
	// "curl: (22) The requested URL returned error: 404" -> the message.
	if i := strings.Index(msg, ") "); strings.HasPrefix(msg, "curl: (") && i > 0 {
		msg = msg[i+2:]
	}
	if msg == "" {
		msg = "no message"
	}
	switch code {
	case 28:
		switch {
		case strings.Contains(msg, "too slow"):
			return errStalled
		case !t.deadline.IsZero() && time.Until(t.deadline) < 100*time.Millisecond:
			return errTimeUp
		case strings.Contains(msg, "onnect") || strings.Contains(msg, "esolv"):
			return fmt.Errorf("could not connect in %v (DEBUGINFOD_TIMEOUT): %s (curl exit 28); is the server up and reachable?", t.timeout, msg)
		}
	case 63:
		return errCapLength{-1}
	case 22:
		if i := strings.LastIndex(msg, "error: "); i >= 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(msg[i+len("error: "):])); err == nil {
				return httpStatusError(n, "")
			}
		}
	case 47:
		return fmt.Errorf("more than %d redirects (curl: %s); point DEBUGINFOD_URLS at the server the redirects lead to", maxRedirects, msg)
	case 1:
		return fmt.Errorf("redirect refused (http or https only): %s (curl exit 1)", msg)
	case 35, 51, 58, 59, 60, 77, 80, 83, 90, 91:
		return fmt.Errorf("TLS: %s (curl exit %d); if the server's certificate is from a private CA, set CURL_CA_BUNDLE to its PEM file, else install ca-certificates", msg, code)
	case 5, 6:
		return fmt.Errorf("%s (curl exit %d); check the host name in DEBUGINFOD_URLS and the proxy variables (https_proxy, no_proxy)", msg, code)
	case 7:
		return fmt.Errorf("%s (curl exit 7); is the server up and reachable? check https_proxy and no_proxy", msg)
	case 18:
		return fmt.Errorf("the body ended early: %s (curl exit 18); try again or another server", msg)
	}
	return fmt.Errorf("curl exit %d: %s", code, msg)
}

// tailBuffer keeps the last 4 KiB written to it: curl's error is at the
// end.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	const keep = 4 << 10
	n := len(p)
	if len(p) > keep {
		p = p[len(p)-keep:]
	}
	if over := len(t.b) + len(p) - keep; over > 0 {
		t.b = t.b[over:]
	}
	t.b = append(t.b, p...)
	return n, nil
}

// curlLine is curl's error line ("curl: (N) ..."; some errors add lines of
// advice after it), else the last line.
func (t *tailBuffer) curlLine() string {
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	line := lines[len(lines)-1]
	for _, l := range lines {
		if strings.HasPrefix(l, "curl: (") {
			line = l
		}
	}
	return oneLine.Replace(strings.TrimSpace(line))
}
