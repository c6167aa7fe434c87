package tcp

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// scaleWorld is a world at scale in one process: R roots on loopback
// listeners, N ranks each with its own Net (as processes would have),
// every rank through InitCommScalable (the bootstrap, then the peer-record
// all-gather). cfg adjusts a rank's Config, rootCfg a root's; ranks
// report the time each returned.
type scaleWorld struct {
	n, r, l int
	bidir   bool
	timeout time.Duration
	cfg     func(rank int, c *Config)
	rootCfg func(i int, c *Config)
	// next, when set, is the phase after the bootstrap a rank whose init
	// succeeded goes on to (as launch.RunRank's replica group): its error
	// and end time are the rank's; gathered says which ranks got there.
	next     func(rank int, e *Endpoint) error
	gathered []bool
	// bootOnly runs the bootstrap alone (InitScalable): a rank returns
	// once its root's COMPLETE is in, before any peer-record gather.
	bootOnly bool

	roots []*Root
	eps   []*Endpoint
	errs  []error
	ended []time.Time
}

// runWorld runs w and returns it; the endpoints and roots close when the
// test ends. It is the example a bench follows to run a world of R roots,
// bidirectional or not (docs/bootstrap-hierarchy.md#go-api-for-a-world-at-scale).
func runWorld(t testing.TB, w *scaleWorld) *scaleWorld {
	t.Helper()
	if w.timeout == 0 {
		w.timeout = 5 * time.Second
	}
	lns := make([]*net.TCPListener, w.r)
	addrs := make([]netip.AddrPort, w.r)
	for i := range lns {
		ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(loopAny))
		if err != nil {
			t.Fatal(err)
		}
		lns[i], addrs[i] = ln, ln.Addr().(*net.TCPAddr).AddrPort()
	}
	w.roots = make([]*Root, w.r)
	for i := range lns {
		c := Config{Timeout: w.timeout, IfName: "lo", Logger: quietLog, PerInstance: w.l, Bidirectional: w.bidir}
		if w.rootCfg != nil {
			w.rootCfg(i, &c)
		}
		root, err := NewNet(c).CreateRootRange(t.Context(), lns[i], addrs, i, w.n, true)
		if err != nil {
			t.Fatal(err)
		}
		w.roots[i] = root
		t.Cleanup(func() { root.Close() })
	}
	w.eps, w.errs, w.ended, w.gathered = make([]*Endpoint, w.n), make([]error, w.n), make([]time.Time, w.n), make([]bool, w.n)
	var wg sync.WaitGroup
	for rank := range w.n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := Config{Timeout: w.timeout, IfName: "lo", Logger: quietLog, PerInstance: w.l, Bidirectional: w.bidir}
			if w.cfg != nil {
				w.cfg(rank, &c)
			}
			if w.bootOnly {
				w.eps[rank], w.errs[rank] = NewNet(c).InitScalable(t.Context(), addrs, rank, w.n, true)
			} else {
				w.eps[rank], w.errs[rank] = NewNet(c).InitCommScalable(t.Context(), addrs, rank, w.n, true)
			}
			if w.errs[rank] == nil && w.next != nil {
				w.gathered[rank] = true
				w.errs[rank] = w.next(rank, w.eps[rank])
			}
			w.ended[rank] = time.Now()
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, e := range w.eps {
			e.Close()
		}
	})
	return w
}

// agreed checks a world that must succeed: every rank and root without
// error, one cluster id, every listen address everywhere, identical
// peer tables with each record in its slot.
func (w *scaleWorld) agreed(t *testing.T) {
	t.Helper()
	for r, err := range w.errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for i, root := range w.roots {
		if err := root.Wait(); err != nil {
			t.Fatalf("root %d: %v", i, err)
		}
	}
	c0, e0 := w.roots[0].ClusterID(), w.roots[0].Epoch()
	for r, e := range w.eps {
		if e.ClusterID() != c0 || e.Epoch() != e0 {
			t.Fatalf("rank %d: cluster %#x epoch %d, root 0 minted %#x %d", r, e.ClusterID(), e.Epoch(), c0, e0)
		}
		for p, a := range e.Peers() {
			if a != w.eps[p].Addr() {
				t.Fatalf("rank %d has rank %d at %s, it listens on %s", r, p, a, w.eps[p].Addr())
			}
		}
		if !bytes.Equal(e.PeerTable(), w.eps[0].PeerTable()) {
			t.Fatalf("rank %d's peer table differs from rank 0's", r)
		}
		for p := range w.n {
			if err := recordOfRank(p, e.PeerTable()[p*abi.SizeofNcclPeerInfo:]); err != nil {
				t.Fatalf("rank %d, slot %d: %v", r, p, err)
			}
		}
	}
}

func TestRootRule(t *testing.T) {
	for _, c := range []struct{ n, l, want int }{
		{1, 0, 1}, {128, 0, 1}, {129, 0, 2}, {256, 0, 2}, {257, 0, 3}, {65536, 0, 512},
		{1000, 8, 8}, {300, 200, 2}, {129, 100, 2}, {64, 8, 1},
	} {
		if got := RootsFor(c.n, c.l); got != c.want {
			t.Errorf("RootsFor(%d, %d) = %d, want %d", c.n, c.l, got, c.want)
		}
	}
	// Every split is contiguous, covers the world, whole instances per
	// root, the first m roots one unit more, RootOf its inverse.
	for _, c := range []struct{ n, l int }{{64, 0}, {9, 0}, {10, 4}, {64, 8}, {65, 8}, {7, 1}} {
		u := unitSize(true, c.n, c.l)
		nu := units(c.n, u)
		for r := 1; r <= nu; r++ {
			next := 0
			for i := range r {
				lo, hi := RootRange(i, r, c.n, c.l, true)
				if lo != next || hi <= lo || lo%u != 0 || (hi%u != 0 && hi != c.n) {
					t.Fatalf("n=%d l=%d r=%d: root %d serves %d..%d after %d", c.n, c.l, r, i, lo, hi, next)
				}
				if d := units(hi-lo, u) - nu/r; d != 0 && !(d == 1 && i < nu%r) {
					t.Fatalf("n=%d l=%d r=%d: root %d has %d units of %d", c.n, c.l, r, i, units(hi-lo, u), nu)
				}
				for rank := lo; rank < hi; rank++ {
					if got := RootOf(rank, r, c.n, c.l, true); got != i {
						t.Fatalf("n=%d l=%d r=%d: RootOf(%d) = %d, root %d serves it", c.n, c.l, r, rank, got, i)
					}
				}
				next = hi
			}
			if next != c.n {
				t.Fatalf("n=%d l=%d r=%d: the roots serve %d ranks", c.n, c.l, r, next)
			}
		}
		if err := CheckRoots("--roots", nu+1, c.n, c.l, true); err == nil {
			t.Errorf("n=%d l=%d: %d roots for %d units accepted", c.n, c.l, nu+1, nu)
		}
	}
	if _, err := ParseRoots("X", "127.0.0.1:1,nohost"); err == nil || !strings.Contains(err.Error(), `root 1 "nohost"`) {
		t.Errorf("a bad root list: %v", err)
	}
}

// Several roots agree with one: flat and hierarchical, both ring modes.
// Cost: about 2 s for the lot on one core (N up to 64).
func TestMultiRootWorlds(t *testing.T) {
	for _, c := range []struct{ n, r, l int }{
		{8, 1, 0}, {8, 2, 0}, {9, 4, 0}, {64, 5, 0}, {64, 64, 0}, {20, 3, 4}, {64, 8, 8}, {10, 2, 4}, {33, 3, 0},
	} {
		for _, bidir := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d roots=%d l=%d bidir=%v", c.n, c.r, c.l, bidir), func(t *testing.T) {
				runWorld(t, &scaleWorld{n: c.n, r: c.r, l: c.l, bidir: bidir}).agreed(t)
			})
		}
	}
}

// Both ways round gives the table one way round gives, with blocks small
// and large (the large ones take the concurrent exchange), on every shape.
func TestBidirectionalWorlds(t *testing.T) {
	for _, c := range []struct {
		n, l int
		ext  bool
	}{{1, 0, false}, {2, 0, false}, {3, 0, false}, {5, 0, false}, {16, 0, false}, {9, 4, false}, {12, 3, false}, {10, 5, false}, {7, 1, false}, {5, 0, true}, {9, 4, true}} {
		t.Run(fmt.Sprintf("n=%d l=%d extended=%v", c.n, c.l, c.ext), func(t *testing.T) {
			var mu sync.Mutex
			steps := map[uint32]int{} // phase -> steps seen on any rank
			w := &scaleWorld{n: c.n, r: 1, l: c.l, bidir: true, cfg: func(_ int, cf *Config) {
				cf.Extended = c.ext
				cf.Hooks = &Hooks{RingStep: func(phase uint32, step int, _ netip.AddrPort) bool {
					mu.Lock()
					steps[phase] = max(steps[phase], step+1)
					mu.Unlock()
					return false
				}}
			}}
			if c.ext {
				w.rootCfg = func(_ int, cf *Config) { cf.Extended = true }
			}
			runWorld(t, w)
			w.agreed(t)
			// Half the steps of one way round: the rings did run both ways.
			if c.l == 0 && steps[abi.BootstrapPhaseFlatRing] != c.n/2 {
				t.Fatalf("the flat ring of %d ran %d steps, both ways round takes %d", c.n, steps[abi.BootstrapPhaseFlatRing], c.n/2)
			}
			if c.l > 0 && c.n > c.l && steps[abi.BootstrapPhaseIntraRing] != c.l/2 {
				t.Fatalf("the intra ring of %d ran %d steps, both ways round takes %d", c.l, steps[abi.BootstrapPhaseIntraRing], c.l/2)
			}
			for _, block := range []int{8, 3 * smallBlock} {
				out := make([][]byte, c.n)
				var wg sync.WaitGroup
				errs := make([]error, c.n)
				for r, e := range w.eps {
					out[r] = make([]byte, block*c.n)
					for i := range block {
						out[r][r*block+i] = byte(r*7 + i)
					}
					wg.Add(1)
					go func() { defer wg.Done(); errs[r] = e.AllGather(out[r]) }()
				}
				wg.Wait()
				for r := range c.n {
					if errs[r] != nil {
						t.Fatalf("block %d rank %d: %v", block, r, errs[r])
					}
					for p := range c.n {
						for i := range block {
							if out[r][p*block+i] != byte(p*7+i) {
								t.Fatalf("block %d: rank %d has a wrong byte %d of rank %d's block", block, r, i, p)
							}
						}
					}
				}
			}
		})
	}
}

// A root that claims the wrong range is caught by the next root, and the
// ranks of the other roots fail at once, not at the timeout: the failure
// goes round the roots' ring. (Ranks of the failing root that had not yet
// connected retry its closed port until the socket timeout, as with one
// root.)
// With the catching root's own dial of the next root held back, it fails
// before that dial is through: it must still reach the next root, or that
// root and its ranks wait for it until the socket timeout.
func TestPlantedWrongRange(t *testing.T) {
	for _, slow := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(fmt.Sprintf("dial_delay_%s", slow), func(t *testing.T) { plantedWrongRange(t, slow) })
	}
}

func plantedWrongRange(t *testing.T, slow time.Duration) {
	w := runWorld(t, &scaleWorld{n: 12, r: 3, timeout: 3 * time.Second, rootCfg: func(i int, c *Config) {
		if i == 1 {
			c.plantRange = func(lo, count int) (int, int) { return lo - 1, count + 1 }
		}
		if i == 2 {
			c.plantDialDelay = slow
		}
	}})
	if err := w.roots[2].Wait(); err == nil || !strings.Contains(err.Error(), "root 1 (peer") || !strings.Contains(err.Error(), "claims ranks 3..7, the rule gives root 1 ranks 4..7") {
		t.Fatalf("root 2 did not name root 1's wrong range: %v", err)
	}
	first := w.ended[0]
	for r, err := range w.errs {
		if err == nil {
			t.Fatalf("rank %d succeeded in a world whose roots disagree", r)
		}
		if w.ended[r].Before(first) {
			first = w.ended[r]
		}
	}
	for r := range 8 { // roots 0 and 1
		if d := w.ended[r].Sub(first); d > 2*time.Second {
			t.Fatalf("rank %d (root %d) took %s more than the first rank to fail: %v", r, r/4, d, w.errs[r])
		}
	}
}

// A rank that dials a root not of its range is refused by name.
func TestRankAtWrongRoot(t *testing.T) {
	ln0, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(loopAny))
	if err != nil {
		t.Fatal(err)
	}
	ln1, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(loopAny))
	if err != nil {
		t.Fatal(err)
	}
	defer ln1.Close()
	addrs := []netip.AddrPort{ln0.Addr().(*net.TCPAddr).AddrPort(), ln1.Addr().(*net.TCPAddr).AddrPort()}
	root, err := testNet(t, 3*time.Second).CreateRootRange(t.Context(), ln0, addrs, 0, 6, true)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	// Rank 4 of 6 belongs to root 1; this one dials root 0.
	if _, err := testNet(t, 3*time.Second).initFlat(t.Context(), addrs[0], 4, 6, true, rootSpan{0, 0, 3}); err == nil {
		t.Fatal("rank 4 was answered by root 0")
	}
	if err := root.Wait(); err == nil || !strings.Contains(err.Error(), "rank 4 belongs to root 1 (ranks 3..5), not this root 0 (ranks 0..2)") {
		t.Fatalf("root 0: %v", err)
	}
}

// BenchmarkScaleWorld times a whole world (bootstrap and peer-record
// all-gather, in-process ranks on loopback) one way and both ways round,
// with one root and several: run the variants in one run and compare
// (docs/bootstrap-hierarchy.md#go-api-for-a-world-at-scale).
func BenchmarkScaleWorld(b *testing.B) {
	for _, c := range []struct{ n, r, l int }{{64, 1, 0}, {64, 4, 0}, {64, 1, 8}, {64, 4, 8}} {
		for _, bidir := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d roots=%d l=%d bidir=%v", c.n, c.r, c.l, bidir), func(b *testing.B) {
				for b.Loop() {
					w := runWorld(b, &scaleWorld{n: c.n, r: c.r, l: c.l, bidir: bidir})
					for r, err := range w.errs {
						if err != nil {
							b.Fatalf("rank %d: %v", r, err)
						}
					}
					for _, e := range w.eps {
						e.Close()
					}
				}
			})
		}
	}
}
