package collectives

import (
	"fmt"
	"os"

	"github.com/nrtabi/nrtabi/runtime/transport"
)

// EnvGroupInit chooses how a replica group's own comm init bootstraps
// (docs/bootstrap.md#the-per-nc-bootstrap): "flat" or unset, the seed's
// dispatch (neuronInitComm is not a global init, so its bootstrap is flat);
// "hier", the 2-tier bootstrap on the hierarchical world's instances. Every
// rank of a world must say the same: a Go rank reads it, the reference
// libnccom does not yet (a C rank's group comm stays flat).
const EnvGroupInit = "NRTABI_BOOTSTRAP_GROUP_INIT"

// GroupInitFromEnv reads EnvGroupInit through getenv (nil: os.Getenv):
// true for "hier", false for "flat" or unset, an error naming the variable
// for anything else.
func GroupInitFromEnv(getenv func(string) string) (bool, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch v := getenv(EnvGroupInit); v {
	case "", "flat":
		return false, nil
	case "hier":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: use flat (the default, the seed's dispatch: a replica group's comm init is not a global init) or hier (the 2-tier bootstrap on the world's instances), the same on every rank", EnvGroupInit, v)
	}
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

// groupInit is how this group's comm init bootstraps: l > 0 is the 2-tier
// path with l ranks per instance through hc, 0 the seed's flat init. A
// runtime that was asked for the hierarchy (Options.GroupHierarchy) but whose
// comm layer cannot take it is refused by name, never run flat.
func (r *Runtime) groupInit(boot transport.Transport, rg *ReplicaGroup) (HierComms, int, *Error) {
	if !r.groupHier {
		return nil, 0, nil
	}
	hc, ok := r.comms.(HierComms)
	if !ok {
		return nil, 0, invalid("%s=hier: the comm layer (%T) has no 2-tier comm init; the reference libnccom's neuronInitComm is flat", EnvGroupInit, r.comms)
	}
	hw, ok := boot.(hierWorld)
	if !ok {
		return nil, 0, invalid("%s=hier: the bootstrap transport (%T) does not say whether its world is hierarchical", EnvGroupInit, boot)
	}
	h, worldL := hw.Hier()
	if !h {
		worldL = 0
	}
	l, why := groupShape(worldL, rg.BootstrapParticipants)
	if l == 0 {
		r.log.Info("replica group comm init: flat", "group_id", rg.GroupID, "rank_n", rg.RankN, "why", why)
		return nil, 0, nil
	}
	r.log.Info("replica group comm init: hierarchical", "group_id", rg.GroupID, "rank_n", rg.RankN, "per_instance", l, "world_per_instance", worldL)
	return hc, l, nil
}
