package tcp

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
)

// Comms is the slice of libnccom the per-NC bootstrap calls besides the
// bootstrap socket (collectives.Comms), over TCP: a unique id is the address
// of a fresh root listening on this process's interface (ncclGetUniqueId
// without a root comm id), and a comm is a flat-bootstrapped world joined
// through it (ncclCommInitRank). A comm handle is a small integer.
type Comms struct {
	n *Net
	// ctx bounds every root and comm: collectives.Comms' methods take no
	// context (it is the C libnccom's call shape, also served over cgo and
	// in process), so the one NewComms was given stands for them.
	ctx context.Context

	mu     sync.Mutex
	next   uintptr
	splits uint32 // split ids made (GetUniqueIDSplit's serial)
	comms  map[uintptr]*Comm
	roots  []*Root
}

// Comm is one initialised comm: its world (nil when the single-vNC gate
// made the bootstrap a no-op), its rank and size, and the id it was joined by.
type Comm struct {
	Endpoint    *Endpoint
	Rank, RankN int
	ID          UniqueID
	graphBuilt  bool
	split       bool // a view of the world's endpoint, which it does not own (splitcomm.go)
}

// NewComms serves comms over n. ctx bounds the life of every root it starts
// and every comm it joins (CreateRoot, InitFlat): when it ends, their waits
// return at once with an error wrapping context.Cause(ctx).
func NewComms(ctx context.Context, n *Net) *Comms {
	return &Comms{n: n, ctx: ctx, comms: map[uintptr]*Comm{}}
}

// GetUniqueID starts a root for a comm of rankN ranks on this process's
// bootstrap interface and writes its address into id.
func (c *Comms) GetUniqueID(id *UniqueID, rankN int, hint string) error {
	return c.getUniqueID(c.n, id, rankN, false, hint)
}

func (c *Comms) getUniqueID(n *Net, id *UniqueID, rankN int, global bool, hint string) error {
	iface, err := n.Init(netip.Addr{})
	if err != nil {
		return err
	}
	r, err := n.CreateRoot(c.ctx, netip.AddrPortFrom(iface.Addr, 0), rankN, global)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.roots = append(c.roots, r)
	c.mu.Unlock()
	*id = NewUniqueID(r.Addr())
	c.n.log.Debug("unique id", "root", r.Addr().String(), "rank_n", rankN, "hint", hint)
	return nil
}

// InitComm joins rank to the comm whose root id names.
func (c *Comms) InitComm(rankN int, id *UniqueID, rank int, bypassGraph bool) (uintptr, error) {
	return c.initComm(c.n, rankN, id, rank, false, bypassGraph)
}

func (c *Comms) initComm(n *Net, rankN int, id *UniqueID, rank int, global, bypassGraph bool) (uintptr, error) {
	e, err := n.InitCommID(c.ctx, id, rank, rankN, global)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	c.comms[c.next] = &Comm{Endpoint: e, Rank: rank, RankN: rankN, ID: *id, graphBuilt: !bypassGraph}
	return c.next, nil
}

// GetUniqueIDHier is GetUniqueID for a comm whose init takes the 2-tier
// bootstrap with l ranks per instance (collectives.HierComms): the root is
// a hierarchical one, the global-init shape of this package
// (docs/bootstrap.md#the-per-nc-bootstrap).
func (c *Comms) GetUniqueIDHier(id *UniqueID, rankN, l int, hint string) error {
	if !Hierarchical(true, rankN, l) {
		return fmt.Errorf("tcp comms: a comm of %d ranks with %d per instance is not hierarchical", rankN, l)
	}
	return c.getUniqueID(c.shaped(l), id, rankN, true, hint)
}

// InitCommHier joins rank to the hierarchical comm GetUniqueIDHier named.
func (c *Comms) InitCommHier(rankN int, id *UniqueID, rank, l int, bypassGraph bool) (uintptr, error) {
	if !Hierarchical(true, rankN, l) {
		return 0, fmt.Errorf("tcp comms: a comm of %d ranks with %d per instance is not hierarchical", rankN, l)
	}
	return c.initComm(c.shaped(l), rankN, id, rank, true, bypassGraph)
}

// shaped is c's network with l ranks per instance, on the interface c's
// network already chose.
func (c *Comms) shaped(l int) *Net {
	cfg := c.n.cfg
	cfg.PerInstance = l
	s := &Net{cfg: cfg, log: c.n.log}
	c.n.mu.Lock()
	s.iface = c.n.iface
	c.n.mu.Unlock()
	return s
}

func (c *Comms) lookup(h uintptr) (*Comm, error) {
	cm := c.comms[h]
	if cm == nil {
		return nil, fmt.Errorf("tcp comms: comm handle %#x is not live", h)
	}
	return cm, nil
}

// Comm is the comm behind a handle, or nil.
func (c *Comms) Comm(h uintptr) *Comm {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.comms[h]
}

// BuildGraphComm records that the comm's graph exists (the topology stage
// is not this package's).
func (c *Comms) BuildGraphComm(h uintptr) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, err := c.lookup(h)
	if err != nil {
		return err
	}
	cm.graphBuilt = true
	return nil
}

// CommInfo is the comm's rank and size.
func (c *Comms) CommInfo(h uintptr) (rank, rankN int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, err := c.lookup(h)
	if err != nil {
		return 0, 0, err
	}
	return cm.Rank, cm.RankN, nil
}

// FreeComm closes the comm's world.
func (c *Comms) FreeComm(h uintptr) error {
	c.mu.Lock()
	cm, err := c.lookup(h)
	if err == nil {
		delete(c.comms, h)
	}
	c.mu.Unlock()
	if err != nil || cm.split {
		return err
	}
	return cm.Endpoint.Close()
}

// Close stops the roots this process started that are still waiting and
// closes every comm still live.
func (c *Comms) Close() {
	c.mu.Lock()
	roots, comms := c.roots, c.comms
	c.roots, c.comms = nil, map[uintptr]*Comm{}
	c.mu.Unlock()
	for _, r := range roots {
		r.Close()
	}
	for _, cm := range comms {
		if !cm.split {
			cm.Endpoint.Close()
		}
	}
}
