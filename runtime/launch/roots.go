package launch

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// bootScalable is RunRank's bootstrap on a world of len(roots) roots
// (NRTABI_BOOTSTRAP_ROOTS, docs/bootstrap-hierarchy.md#multi-root-range-assignment):
// the first rank of each range serves its root — on the listener the
// launcher handed it, else on its address — and every rank bootstraps
// through the root of its range. The root it serves, if any, is returned
// even when the bootstrap fails: the caller waits for it.
func bootScalable(ctx context.Context, o Options, n *tcp.Net, roots []netip.AddrPort, log *slog.Logger) (*tcp.Root, *tcp.Endpoint, error) {
	l := n.PerInstance()
	if err := tcp.CheckRoots(abi.EnvBootstrapRoots+": roots", len(roots), o.NRanks, l, true); err != nil {
		return nil, nil, err
	}
	if o.Rank < 0 || o.Rank >= o.NRanks {
		return nil, nil, fmt.Errorf("rank %d is not one of the %d ranks", o.Rank, o.NRanks)
	}
	i := tcp.RootOf(o.Rank, len(roots), o.NRanks, l, true)
	lo, hi := tcp.RootRange(i, len(roots), o.NRanks, l, true)
	var root *tcp.Root
	if o.Rank == lo {
		ln, err := InheritedRootListener()
		if err != nil {
			return nil, nil, err
		}
		if ln == nil {
			if ln, err = tcp.ListenPlain(roots[i]); err != nil {
				return nil, nil, fmt.Errorf("root %d of %d cannot listen on %s: %w", i, len(roots), roots[i], err)
			}
		}
		if root, err = n.CreateRootRange(ctx, ln, roots, i, o.NRanks, true); err != nil {
			ln.Close()
			return nil, nil, err
		}
		log.Info("bootstrap: serving a root of a multi-root world", "root", i, "roots", len(roots), "ranks", fmt.Sprintf("%d..%d", lo, hi-1))
	}
	world, err := n.InitCommScalable(ctx, roots, o.Rank, o.NRanks, true)
	return root, world, err
}

// localRoots is RunLocal's R for n ranks of L = l: --roots (in either
// framing), else for its own ranks (no RankCmd) in the default framing the
// rule (tcp.RootsFor), else one root — another rank program, or an older
// one of the extended framing, may not speak the roots' ring
// (docs/bootstrap-hierarchy.md#multi-root-how-many-roots).
func localRoots(o Options, n, l int, extended bool) (int, error) {
	if o.Roots > 0 {
		if err := tcp.CheckRoots("--roots", o.Roots, n, l, true); err != nil {
			return 0, &UsageError{err}
		}
		return o.Roots, nil
	}
	if len(o.RankCmd) > 0 || extended {
		return 1, nil
	}
	return tcp.RootsFor(n, l), nil
}

// bindRoots binds roots 1..r-1 on loopback, as spawnLocal binds root 0:
// before any rank exists, each handed to the first rank of its range.
func bindRoots(r int) (addrs []string, files []*os.File, err error) {
	for range r - 1 {
		ln, err := tcp.ListenPlain(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0))
		if err != nil {
			return addrs, files, fmt.Errorf("binding a root's loopback socket: %w", err)
		}
		f, err := ln.File()
		ln.Close() // the duplicate in f keeps the socket listening
		if err != nil {
			return addrs, files, fmt.Errorf("passing a root's socket to its rank: %w", err)
		}
		addrs, files = append(addrs, ln.Addr().String()), append(files, f)
	}
	return addrs, files, nil
}
