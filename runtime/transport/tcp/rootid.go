package tcp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// CommIDError is a root comm id that does not parse. Its text is exactly
// libnccom's (abi.MsgNccomInvalidCommID); Cause says what was wrong.
type CommIDError struct {
	ID    string
	Cause error
}

func (e *CommIDError) Error() string { return cfmt.Sprintf(abi.MsgNccomInvalidCommID, e.ID) }
func (e *CommIDError) Unwrap() error { return e.Cause }

// ParseRootID is GetSocketAddrFromString: a root comm id written
// <ipv4>:<port>, [<ipv6>]:<port> or <hostname>:<port> (the runtime's
// NEURON_RT_ROOT_COMM_ID). A hostname is resolved within timeout, or until
// ctx ends; its first address wins, as getaddrinfo's does.
func ParseRootID(ctx context.Context, id string, timeout time.Duration) (netip.AddrPort, error) {
	bad := func(format string, args ...any) (netip.AddrPort, error) {
		return netip.AddrPort{}, &CommIDError{ID: id, Cause: fmt.Errorf(format, args...)}
	}
	var host, port string
	if strings.HasPrefix(id, "[") {
		end := strings.Index(id, "]:")
		if end < 0 {
			return bad("an IPv6 address needs the form [<ipv6>]:<port>")
		}
		host, port = id[1:end], id[end+2:]
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return bad("%q is not an IPv6 address", host)
		}
		p, err := parsePort(port)
		if err != nil {
			return bad("%v", err)
		}
		return netip.AddrPortFrom(a, p), nil
	}
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return bad("no :<port>")
	}
	host, port = id[:i], id[i+1:]
	if host == "" {
		return bad("no host before :%s", port)
	}
	if strings.Contains(host, ":") {
		return bad("an IPv6 address must be written in brackets")
	}
	p, err := parsePort(port)
	if err != nil {
		return bad("%v", err)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a, p), nil
	}
	if !validHostname(host) {
		return bad("%q is neither an IPv4 address nor a hostname", host)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return bad("cannot resolve %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return bad("cannot resolve %q: %v", host, err)
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), p), nil
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("port %q is not a number in 1..65535", s)
	}
	return uint16(n), nil
}

// validHostname accepts RFC 1123 labels separated by dots.
func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}
