package elfread

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
)

// The proxy of an http:// download, from the variables curl (and so
// elfutils' libcurl client) reads: http_proxy, then HTTP_PROXY (not under
// CGI, where a request header can set it), then all_proxy/ALL_PROXY;
// no_proxy/NO_PROXY lists the hosts reached directly. As in curl, loopback
// hosts go through the proxy unless no_proxy names them, a proxy without a
// scheme is http://, and one without a port listens on 1080.

// ProxyVariables are the variables that route a download through a proxy:
// the http:// client's (pickProxyEnv, noProxy) and curl's. Tests of servers
// on loopback unset them, as a proxy would be asked for those too.
var ProxyVariables = []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"}

// proxyEnv is one proxy variable and its value.
type proxyEnv struct {
	Name, Value string
}

// httpProxyFor returns the proxy to use for u (nil: connect directly) and
// the variable that named it. A value that is not a URL is an error naming
// the variable.
func httpProxyFor(u *url.URL) (*url.URL, string, error) {
	env := pickProxyEnv()
	if env.Value == "" || noProxy(u, firstEnv("no_proxy", "NO_PROXY")) {
		return nil, "", nil
	}
	raw := env.Value
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	p, err := url.Parse(raw)
	if err != nil || p.Hostname() == "" {
		return nil, env.Name, fmt.Errorf("%s=%s is not a proxy URL; fix or unset %s", env.Name, redactUserinfo(env.Value), env.Name)
	}
	p.Scheme = strings.ToLower(p.Scheme)
	return p, env.Name, nil
}

func pickProxyEnv() proxyEnv {
	names := []string{"http_proxy"}
	if os.Getenv("REQUEST_METHOD") == "" {
		names = append(names, "HTTP_PROXY")
	}
	for _, n := range append(names, "all_proxy", "ALL_PROXY") {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return proxyEnv{n, v}
		}
	}
	return proxyEnv{}
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// noProxy reports whether list (comma- or space-separated, curl's syntax)
// names u's host: "*" names every host; a name matches itself and its
// subdomains (a leading dot is ignored); an IP address matches itself, and
// ADDR/BITS the addresses in that prefix; an entry with :PORT matches that
// port only.
func noProxy(u *url.URL, list string) bool {
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	hostIP, ipErr := netip.ParseAddr(host)
	for _, e := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		e = strings.ToLower(e)
		if e == "*" {
			return true
		}
		if pfx, err := netip.ParsePrefix(strings.Trim(e, "[]")); err == nil {
			if ipErr == nil && pfx.Contains(hostIP.Unmap()) {
				return true
			}
			continue
		}
		eport := ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			e, eport = h, p
		}
		e = strings.TrimSuffix(strings.TrimPrefix(strings.Trim(e, "[]"), "."), ".")
		if eport != "" && eport != port || e == "" {
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			if ipErr == nil && ip.Unmap() == hostIP.Unmap() {
				return true
			}
			continue
		}
		if host == e || strings.HasSuffix(host, "."+e) {
			return true
		}
	}
	return false
}

// redactUserinfo hides a user and password in a URL (a server's or a
// proxy's) named in an error, whether or not it parses.
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
