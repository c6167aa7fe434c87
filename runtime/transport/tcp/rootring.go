package tcp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The roots' ring of a multi-root world
// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring): root i dials
// root i+1 and sends its range (root 0: and the world's cluster id), takes
// root i-1's range among its ranks' records, then passes its first rank's
// address back and the cluster id on, so that each root can answer the
// last rank of its range with the next range's first.

// rootRing is one root's place among the roots.
type rootRing struct {
	roots  []netip.AddrPort
	index  int
	lo, hi int
}

// CreateRootRange starts root index of the roots listed (R = len(roots))
// on ln for a world of nranks: it serves RootRange(index) and joins the
// roots' ring. One root is CreateRootOn, exactly.
func (n *Net) CreateRootRange(ctx context.Context, ln *net.TCPListener, roots []netip.AddrPort, index, nranks int, global bool) (*Root, error) {
	if err := n.rootGate(nranks); err != nil {
		return nil, err
	}
	if err := n.checkScalable(roots, 0, nranks, global); err != nil {
		return nil, err
	}
	if index < 0 || index >= len(roots) {
		return nil, fmt.Errorf("bootstrap root: index %d is not one of the %d roots", index, len(roots))
	}
	if len(roots) == 1 {
		return n.serveRoot(ctx, ln, nranks, global), nil
	}
	lo, hi := RootRange(index, len(roots), nranks, n.cfg.PerInstance, global)
	return n.serveRootRing(ctx, ln, nranks, global, &rootRing{roots: roots, index: index, lo: lo, hi: hi}), nil
}

func (rr *rootRing) next() int { return (rr.index + 1) % len(rr.roots) }
func (rr *rootRing) prev() int { return (rr.index - 1 + len(rr.roots)) % len(rr.roots) }

func (r *Root) rootName(i int) string {
	return fmt.Sprintf("root %d (%s)", i, r.ring.roots[i])
}

// dialNextRoot connects to the next root and sends this root's range, and
// on root 0 the cluster id and epoch it minted.
func (r *Root) dialNextRoot() (*link, error) {
	rr := r.ring
	if d := r.n.cfg.plantDialDelay; d > 0 {
		time.Sleep(d)
	}
	l, err := dial(rr.roots[rr.next()].String(), "next "+r.rootName(rr.next()), r.n.cfg.Timeout, r.st)
	if err != nil {
		return nil, err
	}
	r.st.add(l.c)
	lo, count := rr.lo, rr.hi-rr.lo
	if p := r.n.cfg.plantRange; p != nil {
		lo, count = p(lo, count)
	}
	rg := abi.BootstrapRootRange{Sanity: abi.BootstrapRootSanity, Nroots: uint32(len(rr.roots)), Index: uint32(rr.index),
		Nranks: uint32(r.nranks), PerInstance: uint32(r.perInstance), Lo: uint32(lo), Count: uint32(count)}
	b := make([]byte, abi.SizeofBootstrapRootRange)
	rg.MarshalTo(b)
	if err := l.sendFrame(b, "its range"); err != nil {
		return l, err
	}
	if rr.index == 0 {
		return l, r.sendCluster(l)
	}
	return l, nil
}

func (r *Root) sendCluster(l *link) error {
	c := abi.BootstrapRootCluster{Sanity: abi.BootstrapRootSanity, Index: 0, ClusterID: r.cluster, Epoch: r.epoch}
	b := make([]byte, abi.SizeofBootstrapRootCluster)
	c.MarshalTo(b)
	return l.sendFrame(b, "the cluster id")
}

// takeRange checks the previous root's range against the rule: the same
// world, the index before this root's, the rule's split.
func (r *Root) takeRange(rc *rankConn, b []byte) error {
	rr := r.ring
	var rg abi.BootstrapRootRange
	rg.UnmarshalFrom(b)
	p := rr.prev()
	who := fmt.Sprintf("root (peer %s)", rc.remote)
	lo, hi := RootRange(p, len(rr.roots), r.nranks, r.perInstance, r.global)
	switch {
	case rg.Sanity != abi.BootstrapRootSanity:
		return fmt.Errorf("%s sent a 32-byte record with magic %#08x, expected %#08x (a root of the roots' ring)", who, rg.Sanity, abi.BootstrapRootSanity)
	case int(rg.Nroots) != len(rr.roots) || int(rg.Nranks) != r.nranks || int(rg.PerInstance) != r.perInstance:
		return fmt.Errorf("%s serves a world of %d ranks, %d roots, per_instance %d; this root's has %d ranks, %d roots, per_instance %d: give every root the same %s, world size and L",
			who, rg.Nranks, rg.Nroots, rg.PerInstance, r.nranks, len(rr.roots), r.perInstance, abi.EnvBootstrapRoots)
	case int(rg.Index) != p:
		return fmt.Errorf("%s says it is root %d, but root %d's predecessor on the roots' ring is root %d (%s)", who, rg.Index, rr.index, p, rr.roots[p])
	case int(rg.Lo) != lo || int(rg.Count) != hi-lo:
		return fmt.Errorf("root %d (peer %s) claims ranks %d..%d, the rule gives root %d ranks %d..%d (docs/bootstrap-hierarchy.md#multi-root-range-assignment)",
			p, rc.remote, rg.Lo, int(rg.Lo)+int(rg.Count)-1, p, lo, hi-1)
	}
	rc.l.peer = "previous " + r.rootName(p) + " (peer " + rc.remote + ")"
	return nil
}

// ringOfRoots runs steps (3)-(5) once this root holds its ranks: its first
// rank's address back to the previous root, the next root's first from
// it, the cluster id on. It returns the address of the next range's first
// rank.
func (r *Root) ringOfRoots(prev, next *link, first abi.NcclSocketAddress) (abi.NcclSocketAddress, error) {
	rr := r.ring
	f := abi.BootstrapRootFirst{Sanity: abi.BootstrapRootSanity, Index: uint32(rr.index), First: first}
	b := make([]byte, abi.SizeofBootstrapRootFirst)
	f.MarshalTo(b)
	if err := prev.sendFrame(b, "its first rank's address"); err != nil {
		return first, err
	}
	if err := next.recvExact(b, "its first rank's address"); err != nil {
		return first, err
	}
	f.UnmarshalFrom(b)
	if f.Sanity != abi.BootstrapRootSanity || int(f.Index) != rr.next() {
		return first, fmt.Errorf("%s sent a first-rank record with magic %#08x, index %d; expected %#08x, index %d", next.peer, f.Sanity, f.Index, abi.BootstrapRootSanity, rr.next())
	}
	if _, err := DecodeAddr(f.First); err != nil {
		return first, fmt.Errorf("%s names no usable listen address for its first rank: %v", next.peer, err)
	}
	cb := make([]byte, abi.SizeofBootstrapRootCluster)
	if err := prev.recvExact(cb, "the cluster id"); err != nil {
		return first, err
	}
	var c abi.BootstrapRootCluster
	c.UnmarshalFrom(cb)
	if c.Sanity != abi.BootstrapRootSanity || c.Index != 0 {
		return first, fmt.Errorf("%s sent a cluster record with magic %#08x, index %d; expected %#08x, index 0", prev.peer, c.Sanity, c.Index, abi.BootstrapRootSanity)
	}
	if rr.index == 0 {
		if c.ClusterID != r.cluster || c.Epoch != r.epoch {
			return first, fmt.Errorf("the cluster id came back round the roots' ring from %s as %#016x epoch %d, root 0 minted %#016x epoch %d", prev.peer, c.ClusterID, c.Epoch, r.cluster, r.epoch)
		}
		return f.First, nil
	}
	r.cluster, r.epoch = c.ClusterID, c.Epoch
	return f.First, r.sendCluster(next)
}
