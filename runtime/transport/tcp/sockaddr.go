package tcp

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net"
	"net/netip"
	"strconv"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// UniqueID is libnccom's ncclUniqueId: 128 bytes whose first 28 hold the
// root listener's socket address in the C layout, the rest zero.
type UniqueID = [abi.NcclUniqueIDBytes]byte

// EncodeAddr is ap as C stores it in nccl_socket_address_t: a sockaddr_in for
// an IPv4 address (sin_addr in flowinfo's four bytes), a sockaddr_in6
// otherwise. The port is in network order, as htons leaves it.
func EncodeAddr(ap netip.AddrPort) abi.NcclSocketAddress {
	var sa abi.NcclSocketAddress
	// The generated encoder writes the field little-endian; holding the
	// byte-swapped value puts the port's bytes on the wire big-endian.
	sa.Port = bits.ReverseBytes16(ap.Port())
	a := ap.Addr()
	if a.Is4() || a.Is4In6() {
		b := a.Unmap().As4()
		sa.Family = uint16(abi.SockaddrFamilyInet)
		sa.Flowinfo = binary.LittleEndian.Uint32(b[:]) // the bytes in memory order
		return sa
	}
	sa.Family = uint16(abi.SockaddrFamilyInet6)
	sa.Addr = a.As16()
	sa.ScopeID = zoneIndex(a.Zone())
	return sa
}

// DecodeAddr reads a socket address back from its C image.
func DecodeAddr(sa abi.NcclSocketAddress) (netip.AddrPort, error) {
	port := bits.ReverseBytes16(sa.Port)
	switch uint32(sa.Family) {
	case abi.SockaddrFamilyInet:
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], sa.Flowinfo)
		return netip.AddrPortFrom(netip.AddrFrom4(b), port), nil
	case abi.SockaddrFamilyInet6:
		a := netip.AddrFrom16(sa.Addr)
		if sa.ScopeID != 0 {
			a = a.WithZone(zoneName(sa.ScopeID))
		}
		return netip.AddrPortFrom(a, port), nil
	}
	return netip.AddrPort{}, fmt.Errorf("socket address family %d is neither AF_INET (%d) nor AF_INET6 (%d)", sa.Family, abi.SockaddrFamilyInet, abi.SockaddrFamilyInet6)
}

// NewUniqueID is the unique id naming the root listening at ap.
func NewUniqueID(ap netip.AddrPort) UniqueID {
	var id UniqueID
	sa := EncodeAddr(ap)
	sa.MarshalTo(id[:abi.NcclSocketAddressSize])
	return id
}

// RootAddr is the root listener address a unique id holds.
func RootAddr(id *UniqueID) (netip.AddrPort, error) {
	var sa abi.NcclSocketAddress
	if IsSplitID(id) {
		// a rank on the seed's flat path given a split id (splitid.go)
		return netip.AddrPort{}, fmt.Errorf("the unique id is a split of the world (docs/bootstrap.md#group-comm-split), not a root: this rank took the seed's flat comm init (NRTABI_BOOTSTRAP_GROUP_INIT=flat or hier); every rank must set the same")
	}
	sa.UnmarshalFrom(id[:abi.NcclSocketAddressSize])
	if sa.Family == 0 {
		return netip.AddrPort{}, fmt.Errorf("the unique id holds no root address (family 0): it was never filled by GetUniqueID or never broadcast")
	}
	ap, err := DecodeAddr(sa)
	if err != nil {
		return ap, fmt.Errorf("unique id: %w", err)
	}
	if ap.Port() == 0 {
		return ap, fmt.Errorf("unique id names %s without a port", ap.Addr())
	}
	return ap, nil
}

// zoneIndex is the interface index of an IPv6 zone (sin6_scope_id).
func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}

func zoneName(index uint32) string {
	if ifi, err := net.InterfaceByIndex(int(index)); err == nil {
		return ifi.Name
	}
	return strconv.FormatUint(uint64(index), 10)
}
