package tcp

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// InitComm is the bootstrap part of ncclCommInitRank for one rank (docs/sources.md#s001
// §3 initTransportsRank): InitFlat, then "initTransportRank AllGather1" of
// every rank's 112-byte ncclPeerInfo record round the ring. A C libnccom
// runs the same all-gather after its flat bootstrap, so a world mixing both
// stays in step. A nil Endpoint is the single-vNC gate, as for InitFlat;
// ctx is InitFlat's. The unique id hashed into the record is root's
// (NewUniqueID), as a C rank parses its root comm id into one.
func (n *Net) InitComm(ctx context.Context, root netip.AddrPort, rank, nranks int, global bool) (*Endpoint, error) {
	id := NewUniqueID(root)
	return n.InitCommID(ctx, &id, rank, nranks, global)
}

// InitCommID is InitComm of the comm whose unique id is id: the bytes the
// record's hashes mix in are id's own, whoever made it.
func (n *Net) InitCommID(ctx context.Context, id *UniqueID, rank, nranks int, global bool) (*Endpoint, error) {
	root, err := RootAddr(id)
	if err != nil {
		return nil, err
	}
	return n.initComm(ctx, id, rank, nranks, global, func() (*Endpoint, error) {
		return n.InitFlat(ctx, root, rank, nranks, global)
	})
}

// initComm is InitCommID after the bootstrap init runs: the peer-record
// all-gather and the global maps.
func (n *Net) initComm(_ context.Context, id *UniqueID, rank, nranks int, global bool, init func() (*Endpoint, error)) (*Endpoint, error) {
	e, err := init()
	if err != nil || e == nil {
		return e, err
	}
	size := abi.SizeofNcclPeerInfo
	all := make([]byte, size*nranks)
	dev := n.cfg.Device
	host, pid := n.cfg.hashes()
	// comm: the address of this rank's comm object, as the C record holds
	// its ncclComm's; the Endpoint is never moved (Go's heap does not move).
	comm := uint64(uintptr(unsafe.Pointer(e)))
	copy(all[rank*size:], PeerRecord(rank, id, &dev, host, pid, comm))
	// Each record is held to its slot as it arrives, before it is passed
	// on: a relay that forwards forged copies is named, not the rank whose
	// slot it filled (AllGatherRecords).
	if err := e.AllGatherRecords(all, size, recordOfRank); err != nil {
		e.Close()
		return nil, fmt.Errorf("initTransportRank AllGather1: %w", err)
	}
	// The C side logs the same line: a test recomputes each rank's record
	// from the process-local inputs it names (runtime/e2e peerrecord_test.go).
	n.log.Info(fmt.Sprintf("initTransportRank: rank %d peer record pid %d comm %#x: %s", rank, os.Getpid(), comm,
		hex.EncodeToString(all[rank*size:(rank+1)*size])))
	if global {
		m, err := BuildGlobalMaps(all, nranks, uint32(dev.PodType))
		if err != nil {
			e.Close()
			return nil, err
		}
		e.maps = &m
		ultra := 0
		if m.UltraServer {
			ultra = 1
		}
		n.log.Info(fmt.Sprintf("initTransportRank: rank %d global init maps: mla_indexes %s host_device_ids %s pod_type %d ultraserver %d",
			rank, intList(m.MLAIndexes), intList(m.HostDeviceIDs), m.PodType, ultra))
	}
	e.table = all
	return e, nil
}

// recordOfRank holds a gathered peer record to the slot it sits in: its
// rank field names that rank.
func recordOfRank(r int, rec []byte) error {
	var p abi.NcclPeerInfo
	if got := int(int32(binary.LittleEndian.Uint32(rec[unsafe.Offsetof(p.Rank):]))); got != r {
		return fmt.Errorf("the record says rank %d", got)
	}
	return nil
}

// GlobalMaps are the maps a global init built after AllGather1; nil for
// a comm that is not global (or before InitComm).
func (e *Endpoint) GlobalMaps() *GlobalMaps { return e.maps }

// PeerTable is a copy of the gathered "initTransportRank AllGather1" table
// (nranks 112-byte ncclPeerInfo records, rank order): the same bytes on
// every rank of a world, flat or hierarchical. nil before InitComm.
func (e *Endpoint) PeerTable() []byte { return append([]byte(nil), e.table...) }

// TableDigest is upstream's getHash (GetHash) of a gathered table: the
// digest the reference libnccom logs for its own ("gathered tables: ...
// peers %016llx"), so a mixed world's Go and C ranks can be compared.
func TableDigest(b []byte) uint64 { return GetHash(b) }
