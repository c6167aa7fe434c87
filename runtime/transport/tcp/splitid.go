package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// A split id is the unique id of a replica group's comm that is derived
// from the agreed world's bootstrap instead of a second root
// (docs/bootstrap.md#group-comm-split, extension group-comm-split). The
// id is opaque to libnrt, so the library that makes it (this package for a
// Go rank, runtime/libnccom/split.c for a C rank) says in it what the
// group's init checks; both write and read the same 128 bytes,
// little-endian:
//
//	[0:8)    SPLIT_ID_MAGIC, "nrtsplit" (its first two bytes read as a socket family that
//	         is neither AF_INET nor AF_INET6, so no root id is one)
//	[8:12)   version, 1
//	[12:16)  the world's size
//	[16:24)  the world's cluster id
//	[24:32)  the world's epoch
//	[32:36)  the group's rank_n (the world's size: only the world in order)
//	[36:40)  the world rank that made the id (the group's rank 0)
//	[40:44)  that rank's serial of split ids on this world, from 1
//	[44:128) zero
const (
	splitMagic   = abi.SplitIDMagic
	splitVersion = abi.SplitIDVersion
	splitUsed    = abi.SplitIDUsed
)

// SplitID is a split id's fields.
type SplitID struct {
	WorldSize    uint32
	Cluster      uint64
	Epoch        int64
	RankN        uint32
	Root, Serial uint32
}

// ErrNotSplit is DecodeSplitID's answer for an id without the split magic
// (a root id, or garbage).
var ErrNotSplit = errors.New("the unique id is not a split id")

// IsSplitID reports whether id carries the split magic.
func IsSplitID(id *UniqueID) bool { return string(id[:len(splitMagic)]) == splitMagic }

// EncodeSplitID is s's image.
func EncodeSplitID(s SplitID) UniqueID {
	var id UniqueID
	copy(id[:], splitMagic)
	le := binary.LittleEndian
	le.PutUint32(id[8:], uint32(splitVersion))
	le.PutUint32(id[12:], s.WorldSize)
	le.PutUint64(id[16:], s.Cluster)
	le.PutUint64(id[24:], uint64(s.Epoch))
	le.PutUint32(id[32:], s.RankN)
	le.PutUint32(id[36:], s.Root)
	le.PutUint32(id[40:], s.Serial)
	return id
}

// DecodeSplitID reads a split id, refusing by name every field that no
// maker writes; ErrNotSplit when id has no split magic at all.
func DecodeSplitID(id *UniqueID) (SplitID, error) {
	if !IsSplitID(id) {
		return SplitID{}, ErrNotSplit
	}
	le := binary.LittleEndian
	if v := le.Uint32(id[8:]); v != uint32(splitVersion) {
		return SplitID{}, fmt.Errorf("split unique id: version %d, this library reads %d", v, splitVersion)
	}
	for i := splitUsed; i < len(id); i++ {
		if id[i] != 0 {
			return SplitID{}, fmt.Errorf("split unique id: byte %d is %#x, bytes %d..%d must be zero", i, id[i], splitUsed, len(id)-1)
		}
	}
	s := SplitID{WorldSize: le.Uint32(id[12:]), Cluster: le.Uint64(id[16:]), Epoch: int64(le.Uint64(id[24:])),
		RankN: le.Uint32(id[32:]), Root: le.Uint32(id[36:]), Serial: le.Uint32(id[40:])}
	switch {
	case s.WorldSize < 1 || s.WorldSize > uint32(abi.BootstrapMaxRanks):
		return s, fmt.Errorf("split unique id: world size %d is outside 1..%d (BOOTSTRAP_MAX_RANKS)", s.WorldSize, abi.BootstrapMaxRanks)
	case s.RankN != s.WorldSize:
		return s, fmt.Errorf("split unique id: rank_n %d is not the world's size %d (only the whole world in order is split)", s.RankN, s.WorldSize)
	case s.Root >= s.WorldSize:
		return s, fmt.Errorf("split unique id: its maker, rank %d, is not a rank of the world of %d", s.Root, s.WorldSize)
	case s.Serial == 0:
		return s, errors.New("split unique id: serial 0 (makers count from 1)")
	}
	return s, nil
}

// String names the id in one line (a rank's report, a log).
func (s SplitID) String() string {
	return fmt.Sprintf("split(cluster=%#016x,epoch=%d,n=%d,root=%d,serial=%d)", s.Cluster, s.Epoch, s.WorldSize, s.Root, s.Serial)
}

// ParseSplitIDText reads String's line back (a rank's report): the id
// it names, refused unless String writes exactly text for it and
// DecodeSplitID takes its image.
func ParseSplitIDText(text string) (UniqueID, error) {
	var s SplitID
	if _, err := fmt.Sscanf(text, "split(cluster=%v,epoch=%d,n=%d,root=%d,serial=%d)", &s.Cluster, &s.Epoch, &s.WorldSize, &s.Root, &s.Serial); err != nil {
		return UniqueID{}, ErrNotSplit
	}
	s.RankN = s.WorldSize
	id := EncodeSplitID(s)
	if _, err := DecodeSplitID(&id); err != nil {
		return UniqueID{}, err
	}
	if s.String() != text {
		return UniqueID{}, fmt.Errorf("not a split id as a rank reports one (%s)", s)
	}
	return id, nil
}

// Check holds a decoded split id to the world e this rank is in and to the
// rank and size the group's init was asked for: any field that is not
// this world's is refused by name (a forged id, or one from another world).
func (s SplitID) Check(e *Endpoint, rankN, rank int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("unique id %s: "+format, append([]any{s}, args...)...)
	}
	switch {
	case int(s.WorldSize) != e.Size():
		return bad("its world has %d ranks, this rank's world %d: forged or from another world", s.WorldSize, e.Size())
	case s.Cluster != e.ClusterID():
		return bad("its cluster id is not this world's %#016x: forged or from another world", e.ClusterID())
	case s.Epoch != e.Epoch():
		return bad("its epoch is not this world's %d: forged or from an earlier world", e.Epoch())
	case rankN != int(s.RankN):
		return bad("the group's init asked for rank_n %d", rankN)
	case rank != e.Rank():
		return bad("the group's rank %d is not this rank's world rank %d: a split group lists the world in order", rank, e.Rank())
	}
	return nil
}
