package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"syscall"

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

// systemInterfaces lists the host's interfaces and their addresses with two
// netlink dumps: the links (net.Interfaces) and one of every address,
// split by interface index here. net.Interface.Addrs dumps every address
// of the host once per interface: on a host of four interfaces, five dumps
// in every rank's bootstrap setup, a tenth of it
// (docs/benchmarks.md#the-agree-phase-s-cpu-2026-12-04).
func systemInterfaces() ([]hostInterface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	tab, err := syscall.NetlinkRIB(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	if err != nil {
		return nil, fmt.Errorf("listing interface addresses: netlink RTM_GETADDR: %w", err)
	}
	byIndex, err := addrDump(tab)
	if err != nil {
		return nil, fmt.Errorf("listing interface addresses: %w", err)
	}
	out := make([]hostInterface, 0, len(ifs))
	for _, ifi := range ifs {
		out = append(out, hostInterface{Name: ifi.Name, Up: ifi.Flags&net.FlagUp != 0, Prefixes: byIndex[ifi.Index]})
	}
	return out, nil
}

// addrDump reads an RTM_GETADDR dump into each interface index's
// prefixes, in the dump's order: an RTM_NEWADDR's IFA_LOCAL when it has
// one (a point-to-point link's IFA_ADDRESS is the far end), else its
// IFA_ADDRESS, as net.Interface.Addrs reads them. An address of another
// family or of the wrong length is skipped; a message too short for its
// header is refused. No zone: link-local addresses, the only ones that
// need one, are never used (see usable).
func addrDump(tab []byte) (map[int][]netip.Prefix, error) {
	msgs, err := syscall.ParseNetlinkMessage(tab)
	if err != nil {
		return nil, fmt.Errorf("a netlink dump that does not parse: %w", err)
	}
	out := map[int][]netip.Prefix{}
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type == syscall.NLMSG_DONE {
			break
		}
		if m.Header.Type != syscall.RTM_NEWADDR {
			continue
		}
		if len(m.Data) < syscall.SizeofIfAddrmsg {
			return nil, fmt.Errorf("an RTM_NEWADDR of %d bytes, shorter than its %d-byte header", len(m.Data), syscall.SizeofIfAddrmsg)
		}
		// struct ifaddrmsg: family, prefixlen, flags, scope (u8), index (u32)
		family, bits, index := m.Data[0], int(m.Data[1]), int(int32(binary.NativeEndian.Uint32(m.Data[4:8])))
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return nil, fmt.Errorf("an RTM_NEWADDR whose attributes do not parse: %w", err)
		}
		var addr, local []byte
		for _, a := range attrs {
			switch a.Attr.Type {
			case syscall.IFA_ADDRESS:
				addr = a.Value
			case syscall.IFA_LOCAL:
				local = a.Value
			}
		}
		if local != nil {
			addr = local
		}
		want := 4
		if family == syscall.AF_INET6 {
			want = 16
		} else if family != syscall.AF_INET {
			continue
		}
		if len(addr) != want || bits > 8*want {
			continue
		}
		ip, _ := netip.AddrFromSlice(addr)
		p := netip.PrefixFrom(ip.Unmap(), bits)
		if !p.IsValid() {
			continue // a v4-mapped IPv6 address with more bits than IPv4 has
		}
		out[index] = append(out[index], p)
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
