package tcp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// ErrNoInterface is bootstrapNetInit's failure, in libnccom's words.
var ErrNoInterface = errors.New(abi.MsgNccomNoInterface)

// Interface is where this process's bootstrap sockets listen
// (bootstrapNetIfAddr without its port).
type Interface struct {
	Name string
	Addr netip.Addr
}

func (i Interface) String() string { return i.Name + ":" + i.Addr.String() }

// hostInterface is what the selection reads about one interface.
type hostInterface struct {
	Name     string
	Up       bool
	Prefixes []netip.Prefix
}

func systemInterfaces() ([]hostInterface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	out := make([]hostInterface, 0, len(ifs))
	for _, ifi := range ifs {
		hi := hostInterface{Name: ifi.Name, Up: ifi.Flags&net.FlagUp != 0}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			// No zone: link-local addresses, the only ones that need one, are
			// never used (see usable).
			ip = ip.Unmap()
			hi.Prefixes = append(hi.Prefixes, netip.PrefixFrom(ip, ones))
		}
		out = append(out, hi)
	}
	return out, nil
}

// family is CCOM_SOCKET_FAMILY: 0 (either), 4 or 6.
type family int

func parseFamily(s string) (family, error) {
	switch s {
	case "":
		return 0, nil
	case "AF_INET":
		return 4, nil
	case "AF_INET6":
		return 6, nil
	}
	return 0, fmt.Errorf("%s=%q: use AF_INET or AF_INET6", abi.EnvSocketFamily, s)
}

func (f family) admits(a netip.Addr) bool {
	return f == 0 || f == 4 && a.Is4() || f == 6 && a.Is6()
}

// ifList is the interface-list syntax of CCOM_SOCKET_IFNAME (NCCL's):
// comma-separated name prefixes; a leading '^' turns the list into
// exclusions, a leading '=' (after any '^') demands exact names.
type ifList struct {
	exclude, exact bool
	names          []string
}

func parseIfList(s string) ifList {
	var l ifList
	if strings.HasPrefix(s, "^") {
		l.exclude, s = true, s[1:]
	}
	if strings.HasPrefix(s, "=") {
		l.exact, s = true, s[1:]
	}
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			l.names = append(l.names, n)
		}
	}
	return l
}

func (l ifList) match(name string) bool {
	hit := false
	for _, n := range l.names {
		if l.exact && name == n || !l.exact && strings.HasPrefix(name, n) {
			hit = true
			break
		}
	}
	return hit != l.exclude
}

// usable are the addresses of hi a bootstrap socket can listen on, IPv4
// first: link-local IPv6 needs a scope the peers cannot know.
func usable(hi hostInterface, fam family) []netip.Addr {
	var out []netip.Addr
	for _, p := range hi.Prefixes {
		a := p.Addr()
		if !fam.admits(a) || a.IsUnspecified() || a.Is6() && a.IsLinkLocalUnicast() {
			continue
		}
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Is4() && !out[j].Is4() })
	return out
}

// selectInterface is bootstrapNetInit's choice. CCOM_SOCKET_IFNAME, when
// set, is the only list searched. Otherwise an interface on the root's
// subnet wins, then any interface but docker* and lo*, then docker*, then lo*.
func selectInterface(list []hostInterface, ifname string, fam family, root netip.Addr) (Interface, error) {
	first := func(l ifList) (Interface, bool) {
		for _, hi := range list {
			if !hi.Up || !l.match(hi.Name) {
				continue
			}
			if a := usable(hi, fam); len(a) > 0 {
				return Interface{Name: hi.Name, Addr: a[0]}, true
			}
		}
		return Interface{}, false
	}
	if ifname != "" {
		if i, ok := first(parseIfList(ifname)); ok {
			return i, nil
		}
		return Interface{}, ErrNoInterface
	}
	if root.IsValid() {
		root = root.Unmap().WithZone("")
		for _, hi := range list {
			if !hi.Up {
				continue
			}
			for _, p := range hi.Prefixes {
				a := p.Addr()
				if fam.admits(a) && netip.PrefixFrom(a.WithZone(""), p.Bits()).Contains(root) {
					return Interface{Name: hi.Name, Addr: a}, nil
				}
			}
		}
	}
	for _, l := range []ifList{{exclude: true, names: []string{"docker", "lo"}}, {names: []string{"docker"}}, {names: []string{"lo"}}} {
		if i, ok := first(l); ok {
			return i, nil
		}
	}
	return Interface{}, ErrNoInterface
}
