package tcp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"reflect"
	"syscall"
	"testing"
)

// addrsByNet is what systemInterfaces read before: every interface's
// addresses through net.Interface.Addrs, one dump each — the oracle.
func addrsByNet(t *testing.T) []hostInterface {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var out []hostInterface
	for _, ifi := range ifs {
		hi := hostInterface{Name: ifi.Name, Up: ifi.Flags&net.FlagUp != 0}
		addrs, err := ifi.Addrs()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			ipn := a.(*net.IPNet)
			ip, _ := netip.AddrFromSlice(ipn.IP)
			ones, _ := ipn.Mask.Size()
			hi.Prefixes = append(hi.Prefixes, netip.PrefixFrom(ip.Unmap(), ones))
		}
		out = append(out, hi)
	}
	return out
}

// TestSystemInterfacesOneDump: the one address dump split by index gives
// every interface the prefixes net.Interface.Addrs gives it, in its order.
func TestSystemInterfacesOneDump(t *testing.T) {
	got, err := systemInterfaces()
	if err != nil {
		t.Fatal(err)
	}
	if want := addrsByNet(t); !reflect.DeepEqual(got, want) {
		t.Errorf("systemInterfaces = %v, net's Addrs give %v", got, want)
	}
	if len(got) == 0 || len(got[0].Prefixes) == 0 {
		t.Errorf("no interface or no address compared: %v", got)
	}
}

// newAddrMsg is one RTM_NEWADDR of the dump, as the kernel lays it out.
func newAddrMsg(family byte, bits byte, index uint32, attrs ...[]byte) []byte {
	body := []byte{family, bits, 0, 0, 0, 0, 0, 0}
	binary.NativeEndian.PutUint32(body[4:], index)
	for _, a := range attrs {
		body = append(body, a...)
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
	}
	h := make([]byte, syscall.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(h[0:], uint32(len(h)+len(body)))
	binary.NativeEndian.PutUint16(h[4:], syscall.RTM_NEWADDR)
	return append(h, body...)
}

func rtattr(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v))
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	return append(b, v...)
}

// TestAddrDump: a point-to-point address is its IFA_LOCAL, not the far
// end's IFA_ADDRESS; a wrong-length address or another family is skipped;
// a message shorter than its header is refused by size.
func TestAddrDump(t *testing.T) {
	tab := append(newAddrMsg(syscall.AF_INET, 24, 2, rtattr(syscall.IFA_ADDRESS, []byte{10, 0, 0, 9}), rtattr(syscall.IFA_LOCAL, []byte{10, 0, 0, 1})),
		newAddrMsg(syscall.AF_INET6, 64, 2, rtattr(syscall.IFA_ADDRESS, netip.MustParseAddr("fd00::5").AsSlice()))...)
	tab = append(tab, newAddrMsg(syscall.AF_INET, 8, 1, rtattr(syscall.IFA_ADDRESS, []byte{127, 0, 0, 1}))...)
	tab = append(tab, newAddrMsg(syscall.AF_INET, 8, 3, rtattr(syscall.IFA_ADDRESS, []byte{1, 2, 3}))...)
	tab = append(tab, newAddrMsg(syscall.AF_PACKET, 8, 3, rtattr(syscall.IFA_ADDRESS, []byte{1, 2, 3, 4}))...)
	got, err := addrDump(tab)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]netip.Prefix{
		2: {netip.MustParsePrefix("10.0.0.1/24"), netip.MustParsePrefix("fd00::5/64")},
		1: {netip.MustParsePrefix("127.0.0.1/8")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("addrDump = %v, want %v", got, want)
	}
	short := make([]byte, syscall.NLMSG_HDRLEN+4)
	binary.NativeEndian.PutUint32(short[0:], uint32(len(short)))
	binary.NativeEndian.PutUint16(short[4:], syscall.RTM_NEWADDR)
	if _, err := addrDump(short); err == nil {
		t.Error("a 4-byte RTM_NEWADDR was taken")
	}
}

// FuzzAddrDump: any dump ends in prefixes or an error, never a panic, and
// never a prefix longer than its address.
func FuzzAddrDump(f *testing.F) {
	f.Add(newAddrMsg(syscall.AF_INET, 8, 1, rtattr(syscall.IFA_ADDRESS, []byte{127, 0, 0, 1})))
	f.Add(newAddrMsg(syscall.AF_INET6, 200, 1, rtattr(syscall.IFA_LOCAL, make([]byte, 16))))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 20, 0})
	f.Fuzz(func(t *testing.T, tab []byte) {
		m, err := addrDump(tab)
		if err != nil {
			return
		}
		for _, ps := range m {
			for _, p := range ps {
				if !p.IsValid() {
					t.Fatalf("an invalid prefix %v", p)
				}
			}
		}
	})
}
