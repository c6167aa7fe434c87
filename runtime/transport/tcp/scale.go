package tcp

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// Multi-root scalable init (docs/bootstrap-hierarchy.md#wire-at-scale):
// R roots, each serving a contiguous range of units — ranks on a flat
// world, whole instances on a hierarchical one — joined by a ring of
// their own. One root is today's world, unchanged.

// RanksPerRoot is the rule's ranks per root (BOOTSTRAP_RANKS_PER_ROOT).
const RanksPerRoot = int(abi.BootstrapRanksPerRoot)

// unitSize is the ranks of one unit: L on a hierarchical world, else 1.
func unitSize(global bool, n, l int) int {
	if Hierarchical(global, n, l) {
		return l
	}
	return 1
}

func units(n, u int) int { return (n + u - 1) / u }

// RootsFor is the rule for R on a global init of n ranks with L = l (0:
// unset): ceil(n / BOOTSTRAP_RANKS_PER_ROOT), at most one root per unit
// (docs/bootstrap-hierarchy.md#multi-root-how-many-roots).
func RootsFor(n, l int) int {
	if n < 1 {
		return 1
	}
	return max(1, min(units(n, unitSize(true, n, l)), (n+RanksPerRoot-1)/RanksPerRoot))
}

// CheckRoots refuses an R a world of n ranks (L = l, global or not) cannot
// have, naming where it came from.
func CheckRoots(what string, r, n, l int, global bool) error {
	u := units(n, unitSize(global, n, l))
	if r < 1 || r > u {
		kind := "ranks"
		if unitSize(global, n, l) > 1 {
			kind = fmt.Sprintf("instances of %d", l)
		}
		return fmt.Errorf("%s = %d: a world of %d ranks (%d %s) has 1..%d roots, each serving at least one of them (docs/bootstrap-hierarchy.md#multi-root-range-assignment)", what, r, n, u, kind, u)
	}
	return nil
}

// RootRange is the ranks [lo, hi) root i of r serves on a world of n ranks
// (the first n%r... units' remainder goes one each to the first roots).
func RootRange(i, r, n, l int, global bool) (lo, hi int) {
	u := unitSize(global, n, l)
	nu := units(n, u)
	q, m := nu/r, nu%r
	ulo := i*q + min(i, m)
	cnt := q
	if i < m {
		cnt++
	}
	return ulo * u, min(n, (ulo+cnt)*u)
}

// RootOf is the root of rank on a world of n ranks served by r roots.
func RootOf(rank, r, n, l int, global bool) int {
	u := unitSize(global, n, l)
	nu := units(n, u)
	q, m := nu/r, nu%r
	unit := rank / u
	if unit < m*(q+1) {
		return unit / (q + 1)
	}
	return m + (unit-m*(q+1))/q
}

// ParseRoots reads NRTABI_BOOTSTRAP_ROOTS (host:port,...; what names
// where it came from): "" is nil, one root as given elsewhere.
func ParseRoots(what, s string) ([]netip.AddrPort, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxRanks {
		return nil, fmt.Errorf("%s: %d roots, more than the largest world has ranks (%d)", what, len(parts), MaxRanks)
	}
	out := make([]netip.AddrPort, len(parts))
	for i, p := range parts {
		ap, err := netip.ParseAddrPort(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%s: root %d %q is not <ip>:<port> (%v): give every root as ip:port, comma-separated, in root order", what, i, p, err)
		}
		out[i] = ap
	}
	return out, nil
}

// InitScalable is InitFlat for a world of len(roots) roots: the rank dials
// the root of its range. One root is InitFlat of it, exactly.
func (n *Net) InitScalable(ctx context.Context, roots []netip.AddrPort, rank, nranks int, global bool) (*Endpoint, error) {
	if err := n.checkScalable(roots, rank, nranks, global); err != nil {
		return nil, err
	}
	if len(roots) == 1 {
		return n.InitFlat(ctx, roots[0], rank, nranks, global)
	}
	i := RootOf(rank, len(roots), nranks, n.cfg.PerInstance, global)
	lo, hi := RootRange(i, len(roots), nranks, n.cfg.PerInstance, global)
	return n.initFlat(ctx, roots[i], rank, nranks, global, rootSpan{index: i, lo: lo, hi: hi})
}

// InitCommScalable is InitComm over len(roots) roots; the comm's unique id
// is root 0's, the one NEURON_RT_ROOT_COMM_ID names.
func (n *Net) InitCommScalable(ctx context.Context, roots []netip.AddrPort, rank, nranks int, global bool) (*Endpoint, error) {
	if err := n.checkScalable(roots, rank, nranks, global); err != nil {
		return nil, err
	}
	id := NewUniqueID(roots[0])
	return n.initComm(ctx, &id, rank, nranks, global, func() (*Endpoint, error) {
		return n.InitScalable(ctx, roots, rank, nranks, global)
	})
}

func (n *Net) checkScalable(roots []netip.AddrPort, rank, nranks int, global bool) error {
	if len(roots) == 0 {
		return fmt.Errorf("bootstrap: no root given")
	}
	if err := CheckWorldSize("bootstrap: nranks", nranks); err != nil {
		return err
	}
	if err := CheckRoots(abi.EnvBootstrapRoots+": roots", len(roots), nranks, n.cfg.PerInstance, global); err != nil {
		return err
	}
	return nil
}

// rootSpan is the range of the root a rank dials: its stagger counts
// within it (docs/bootstrap-hierarchy.md#multi-root-range-assignment).
type rootSpan struct{ index, lo, hi int }
