package collectives

import (
	"fmt"
	"os"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport"
)

// EnvGroupInit chooses how a replica group's own comm init bootstraps
// (docs/bootstrap.md#the-per-nc-bootstrap): "split" or unset, a group of
// the whole world in order derives its comm from the world's bootstrap
// (docs/bootstrap.md#group-comm-split) and any other group takes the seed's
// flat init; "hier", the 2-tier bootstrap on the hierarchical world's
// instances (docs/bootstrap.md#group-comm-init); "flat", the seed's
// dispatch for every group (neuronInitComm is not a global init). Every
// rank of a world must say the same: a Go rank's collectives read it, and
// so does the reference libnccom of a C rank (runtime/libnccom/split.c).
const EnvGroupInit = abi.EnvBootstrapGroupInit

// GroupInit is EnvGroupInit's value; the zero value is the default, split.
type GroupInit int

const (
	GroupInitSplit GroupInit = iota // the world group from the world's bootstrap
	GroupInitHier                   // the 2-tier bootstrap (groupShape)
	GroupInitFlat                   // the seed's flat init for every group
)

func (g GroupInit) String() string {
	switch g {
	case GroupInitSplit:
		return "split"
	case GroupInitHier:
		return "hier"
	case GroupInitFlat:
		return "flat"
	}
	return fmt.Sprintf("GroupInit(%d)", int(g))
}

// GroupInitFromEnv reads EnvGroupInit through getenv (nil: os.Getenv):
// split for "split" or unset, hier, flat; an error naming the variable for
// anything else.
func GroupInitFromEnv(getenv func(string) string) (GroupInit, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch v := getenv(EnvGroupInit); v {
	case "", "split":
		return GroupInitSplit, nil
	case "hier":
		return GroupInitHier, nil
	case "flat":
		return GroupInitFlat, nil
	default:
		return 0, fmt.Errorf("%s=%q: use split (the default: a group of the whole world derives its comm from the world's bootstrap), hier (the 2-tier bootstrap on the world's instances) or flat (the seed's dispatch), the same on every rank", EnvGroupInit, v)
	}
}

// SplitComms is a Comms that can derive the comm of a group of the whole
// world, in order, from the world's bootstrap transport: the unique id
// says which world (no root is started), the init checks it against the
// world and makes no connection (docs/bootstrap.md#group-comm-split). The
// reference libnccom does the same inside neuronGetUniqueId and
// neuronInitComm, so its Comms need not have these calls.
type SplitComms interface {
	GetUniqueIDSplit(world transport.Transport, id *UniqueID, rankN int, hint string) error
	InitCommSplit(world transport.Transport, rankN int, id *UniqueID, rank int, bypassGraph bool) (uintptr, error)
}

// worldInOrder reports whether bp lists every rank of a world of size n in
// order: the one group whose comm a split derives.
func worldInOrder(bp []uint32, n int) bool {
	if len(bp) != n {
		return false
	}
	for i, p := range bp {
		if p != uint32(i) {
			return false
		}
	}
	return true
}

// HierComms is a Comms whose comm init can take the 2-tier bootstrap with l
// ranks per instance: the unique id names a hierarchical root, and every
// rank joins it through the hierarchical path (the transport's global-init
// shape: docs/bootstrap-hierarchy.md).
type HierComms interface {
	GetUniqueIDHier(id *UniqueID, rankN, l int, hint string) error
	InitCommHier(rankN int, id *UniqueID, rank, l int, bypassGraph bool) (uintptr, error)
}

// hierWorld is a bootstrap transport that knows its world's 2-tier shape
// (tcp.Endpoint): whether it is hierarchical and its L.
type hierWorld interface {
	Hier() (bool, int)
}

// groupShape is the L a replica group's comm init bootstraps with, from the
// world's: bootstrap rank i is global device bp[i], which sits in world
// instance bp[i]/L (the world's instances are runs of L global ids,
// docs/bootstrap-hierarchy.md). The group takes the 2-tier bootstrap with
// L' ranks per instance when its ranks fall into one run per world
// instance, every run but the last of L' ranks and the last of at most L',
// with L' ≥ 2 and more than L' ranks in all: then its instances are the
// world's (a subset of each), its leaders the first participant of each.
// Otherwise it is 0 and why says so; every rank computes the same from the
// same bp and the world's agreed L.
func groupShape(worldL int, bp []uint32) (l int, why string) {
	if worldL < 1 {
		return 0, "the world is flat"
	}
	seen := map[uint32]bool{}
	var runs []int
	for i, p := range bp {
		inst := p / uint32(worldL)
		if i > 0 && inst == bp[i-1]/uint32(worldL) {
			runs[len(runs)-1]++
			continue
		}
		if seen[inst] {
			return 0, fmt.Sprintf("bootstrap_participants visit world instance %d twice (at rank %d)", inst, i)
		}
		seen[inst] = true
		runs = append(runs, 1)
	}
	if len(runs) < 2 {
		return 0, "the group lies within one instance"
	}
	l = runs[0]
	for k, n := range runs[1:] {
		if last := k+2 == len(runs); n > l || (!last && n != l) {
			return 0, fmt.Sprintf("the group's runs per instance are not %d each (run %d has %d)", l, k+1, n)
		}
	}
	if l < 2 {
		return 0, "one participant per instance: the leaders' ring would be the whole group"
	}
	return l, ""
}

// groupPath is how one group's comm init runs: through sc (a split of the
// world), through hc with l per instance (2-tier), or, both nil, the comm
// layer's own GetUniqueID and InitComm.
type groupPath struct {
	sc SplitComms
	hc HierComms
	l  int
}

// groupInit is how this group's comm init bootstraps (EnvGroupInit). A
// runtime that was asked for the hierarchy but whose comm layer or
// transport cannot take it is refused by name, never run flat.
func (r *Runtime) groupInit(boot transport.Transport, rg *ReplicaGroup) (groupPath, *Error) {
	switch r.groupMode {
	case GroupInitFlat:
		return groupPath{}, nil
	case GroupInitSplit:
		if !worldInOrder(rg.BootstrapParticipants, boot.Size()) {
			r.log.Info("replica group comm init: flat", "group_id", rg.GroupID, "rank_n", rg.RankN, "why", "not the whole world in order, which alone is split")
			return groupPath{}, nil
		}
		if sc, ok := r.comms.(SplitComms); ok {
			r.log.Info("replica group comm init: split of the world", "group_id", rg.GroupID, "rank_n", rg.RankN)
			return groupPath{sc: sc}, nil
		}
		// The reference libnccom makes and reads the split id itself
		// (runtime/libnccom/split.c); an in-process layer has no world.
		r.log.Info("replica group comm init: the comm layer's own", "group_id", rg.GroupID, "rank_n", rg.RankN, "comm_layer", fmt.Sprintf("%T", r.comms))
		return groupPath{}, nil
	}
	hc, ok := r.comms.(HierComms)
	if !ok {
		return groupPath{}, invalid("%s=hier: the comm layer (%T) has no 2-tier comm init; the reference libnccom's neuronInitComm is flat", EnvGroupInit, r.comms)
	}
	hw, ok := boot.(hierWorld)
	if !ok {
		return groupPath{}, invalid("%s=hier: the bootstrap transport (%T) does not say whether its world is hierarchical", EnvGroupInit, boot)
	}
	h, worldL := hw.Hier()
	if !h {
		worldL = 0
	}
	l, why := groupShape(worldL, rg.BootstrapParticipants)
	if l == 0 {
		r.log.Info("replica group comm init: flat", "group_id", rg.GroupID, "rank_n", rg.RankN, "why", why)
		return groupPath{}, nil
	}
	r.log.Info("replica group comm init: hierarchical", "group_id", rg.GroupID, "rank_n", rg.RankN, "per_instance", l, "world_per_instance", worldL)
	return groupPath{hc: hc, l: l}, nil
}
