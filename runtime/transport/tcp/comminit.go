package tcp

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
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
// ctx is InitFlat's.
func (n *Net) InitComm(ctx context.Context, root netip.AddrPort, rank, nranks int, global bool) (*Endpoint, error) {
	e, err := n.InitFlat(ctx, root, rank, nranks, global)
	if err != nil || e == nil {
		return e, err
	}
	size := abi.SizeofNcclPeerInfo
	all := make([]byte, size*nranks)
	// The record's layout is the spec's ncclPeerInfo (not a wire struct of
	// its own: libnccom all-gathers the C struct's bytes).
	var p abi.NcclPeerInfo
	mine := all[rank*size:]
	binary.LittleEndian.PutUint32(mine[unsafe.Offsetof(p.Rank):], uint32(int32(rank)))
	binary.LittleEndian.PutUint64(mine[unsafe.Offsetof(p.HostHash):], hostHash())
	binary.LittleEndian.PutUint64(mine[unsafe.Offsetof(p.PidHash):], uint64(os.Getpid()))
	if err := e.AllGather(all); err != nil {
		e.Close()
		return nil, fmt.Errorf("initTransportRank AllGather1: %w", err)
	}
	for r := range nranks {
		if got := int(int32(binary.LittleEndian.Uint32(all[r*size+int(unsafe.Offsetof(p.Rank)):]))); got != r {
			e.Close()
			return nil, fmt.Errorf("initTransportRank AllGather1: rank %d's peer record says rank %d", r, got)
		}
	}
	e.table = all
	return e, nil
}

// PeerTable is a copy of the gathered "initTransportRank AllGather1" table
// (nranks 112-byte ncclPeerInfo records, rank order): the same bytes on
// every rank of a world, flat or hierarchical. nil before InitComm.
func (e *Endpoint) PeerTable() []byte { return append([]byte(nil), e.table...) }

// TableDigest is upstream's getHash (h = h*33 ^ byte from 5381) of a
// gathered table: the digest the reference libnccom logs for its own
// ("gathered tables: ... peers %016llx"), so a mixed world's Go and C ranks
// can be compared.
func TableDigest(b []byte) uint64 {
	h := uint64(5381)
	for _, c := range b {
		h = (h<<5 + h) ^ uint64(c)
	}
	return h
}

func hostHash() uint64 {
	h := fnv.New64a()
	name, _ := os.Hostname()
	h.Write([]byte(name))
	return h.Sum64()
}
