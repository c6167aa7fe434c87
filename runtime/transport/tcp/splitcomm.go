package tcp

import (
	"fmt"

	"github.com/nrtabi/nrtabi/runtime/transport"
)

// GetUniqueIDSplit is GetUniqueID for a comm of the whole world in order,
// derived from the world's bootstrap (collectives.SplitComms,
// docs/bootstrap.md#group-comm-split): no root is started; the id says
// which world it splits (SplitID).
func (c *Comms) GetUniqueIDSplit(world transport.Transport, id *UniqueID, rankN int, hint string) error {
	e, err := splitWorld(world, rankN)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.splits++
	serial := c.splits
	c.mu.Unlock()
	*id = EncodeSplitID(SplitID{WorldSize: uint32(e.Size()), Cluster: e.ClusterID(), Epoch: e.Epoch(), RankN: uint32(rankN),
		Root: uint32(e.Rank()), Serial: serial})
	c.n.log.Debug("unique id", "split_of", e.Root().String(), "rank_n", rankN, "serial", serial, "hint", hint)
	return nil
}

// InitCommSplit joins rank to the comm a split id names: the id is held
// to this rank's world (SplitID.Check) and the comm is a view of the world
// (its endpoint and links, which FreeComm leaves open): no connection is
// made.
func (c *Comms) InitCommSplit(world transport.Transport, rankN int, id *UniqueID, rank int, bypassGraph bool) (uintptr, error) {
	e, err := splitWorld(world, rankN)
	if err != nil {
		return 0, err
	}
	s, err := DecodeSplitID(id)
	if err != nil {
		if err == ErrNotSplit {
			return 0, notSplit(id)
		}
		return 0, err
	}
	if err := s.Check(e, rankN, rank); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	c.comms[c.next] = &Comm{Endpoint: e, Rank: rank, RankN: rankN, ID: *id, graphBuilt: !bypassGraph, split: true}
	return c.next, nil
}

// notSplit names an id that a split init was given but is not one: most
// often the root id of a rank on the seed's flat path.
func notSplit(id *UniqueID) error {
	if ap, err := RootAddr(id); err == nil {
		return fmt.Errorf("the unique id names a root at %s, but this rank derives a whole-world group's comm from the world (NRTABI_BOOTSTRAP_GROUP_INIT unset or split): the group's rank 0 took another path; every rank must set the same", ap)
	}
	return fmt.Errorf("the unique id is neither a split id nor a root id (its first bytes %x): forged or never filled", id[:8])
}

func splitWorld(world transport.Transport, rankN int) (*Endpoint, error) {
	e, ok := world.(*Endpoint)
	if !ok || e == nil {
		return nil, fmt.Errorf("tcp comms: a split comm needs the world's TCP endpoint, got %T", world)
	}
	if rankN != e.Size() {
		return nil, fmt.Errorf("tcp comms: a split comm spans the whole world of %d ranks, not %d", e.Size(), rankN)
	}
	return e, nil
}

// DescribeUniqueID is a unique id in one line: the root address it names,
// or the world it splits.
func DescribeUniqueID(id *UniqueID) (string, error) {
	if IsSplitID(id) {
		s, err := DecodeSplitID(id)
		if err != nil {
			return "", err
		}
		return s.String(), nil
	}
	ap, err := RootAddr(id)
	if err != nil {
		return "", err
	}
	return ap.String(), nil
}
