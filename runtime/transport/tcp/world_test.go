package tcp

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// quietLog keeps test output to failures.
var quietLog = slog.New(slog.DiscardHandler)

// testNet is a bootstrap network on loopback with a short timeout, in the
// default framing; testNetExt in the extended one.
func testNet(t testing.TB, timeout time.Duration) *Net {
	t.Helper()
	return NewNet(Config{Timeout: timeout, IfName: "lo", Logger: quietLog})
}

func testNetExt(t testing.TB, timeout time.Duration) *Net {
	t.Helper()
	return NewNet(Config{Timeout: timeout, IfName: "lo", Logger: quietLog, Extended: true})
}

// loopRoot starts a root on 127.0.0.1 at a free port.
// loopAny is any free loopback port.
var loopAny = netip.MustParseAddrPort("127.0.0.1:0")

func loopRoot(t testing.TB, n *Net, nranks int, global bool) *Root {
	t.Helper()
	r, err := n.CreateRoot(t.Context(), loopAny, nranks, global)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// world bootstraps nranks endpoints in goroutines (each with its own Net, as
// separate processes would have) and returns them, or the errors. Only the
// ranks listed in only start, when given.
func world(t testing.TB, nranks int, global bool, timeout time.Duration, cfg func(rank int, c *Config), only ...int) ([]*Endpoint, []error, *Root) {
	t.Helper()
	return worldIn(t, false, nranks, global, timeout, cfg, only...)
}

// worldExt is world in the extended framing.
func worldExt(t testing.TB, nranks int, global bool, timeout time.Duration, cfg func(rank int, c *Config), only ...int) ([]*Endpoint, []error, *Root) {
	t.Helper()
	return worldIn(t, true, nranks, global, timeout, cfg, only...)
}

func worldIn(t testing.TB, extended bool, nranks int, global bool, timeout time.Duration, cfg func(rank int, c *Config), only ...int) ([]*Endpoint, []error, *Root) {
	t.Helper()
	n := testNet(t, timeout)
	if extended {
		n = testNetExt(t, timeout)
	}
	root := loopRoot(t, n, nranks, global)
	if only == nil {
		for r := 0; r < nranks; r++ {
			only = append(only, r)
		}
	}
	eps, errs := startRanks(t, root, nranks, global, only, func(r int) Config {
		c := Config{Timeout: timeout, IfName: "lo", Logger: quietLog, Extended: extended}
		if cfg != nil {
			cfg(r, &c)
		}
		return c
	})
	return eps, errs, root
}

// startRanks runs InitFlat for each listed rank in a goroutine of its own,
// each with its own Net as separate processes would have, conf giving the
// rank's Config; the endpoints close when the test ends.
func startRanks(t testing.TB, root *Root, nranks int, global bool, ranks []int, conf func(r int) Config) ([]*Endpoint, []error) {
	eps := make([]*Endpoint, nranks)
	errs := make([]error, nranks)
	var wg sync.WaitGroup
	for _, r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eps[r], errs[r] = NewNet(conf(r)).InitFlat(t.Context(), root.Addr(), r, nranks, global)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, e := range eps {
			e.Close()
		}
	})
	return eps, errs
}

func TestWorldSendRecvAllGather(t *testing.T) {
	for _, n := range []int{1, 2, 5, -2, -5} {
		extended := n < 0
		n = max(n, -n)
		t.Run(fmt.Sprintf("%d extended=%v", n, extended), func(t *testing.T) {
			eps, errs, root := worldIn(t, extended, n, true, 5*time.Second, nil)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			if err := root.Wait(); err != nil {
				t.Fatal(err)
			}
			for r, e := range eps {
				if e.ClusterID() != root.ClusterID() || e.Epoch() != root.Epoch() {
					t.Errorf("rank %d: cluster %#x epoch %d, root says %#x %d", r, e.ClusterID(), e.Epoch(), root.ClusterID(), root.Epoch())
				}
				for p, a := range e.Peers() {
					if a != eps[p].Addr() {
						t.Errorf("rank %d sees rank %d at %s, it listens at %s", r, p, a, eps[p].Addr())
					}
				}
			}
			// every ordered pair exchanges two messages, in order
			var wg sync.WaitGroup
			for r := range eps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for p := range eps {
						if p == r {
							continue
						}
						for k := 0; k < 2; k++ {
							if err := eps[r].Send(p, []byte(fmt.Sprintf("%02d>%02d#%d", r, p, k))); err != nil {
								t.Error(err)
							}
						}
					}
					for p := range eps {
						if p == r {
							continue
						}
						for k := 0; k < 2; k++ {
							got := make([]byte, 7)
							if err := eps[r].Recv(p, got); err != nil {
								t.Error(err)
							} else if want := fmt.Sprintf("%02d>%02d#%d", p, r, k); string(got) != want {
								t.Errorf("rank %d from %d: %q, want %q", r, p, got, want)
							}
						}
					}
					buf := make([]byte, 3*n)
					copy(buf[3*r:], fmt.Sprintf("<%d>", r%10))
					if err := eps[r].AllGather(buf); err != nil {
						t.Error(err)
					}
					var want bytes.Buffer
					for p := 0; p < n; p++ {
						fmt.Fprintf(&want, "<%d>", p%10)
					}
					if string(buf) != want.String() {
						t.Errorf("rank %d all-gather %q, want %q", r, buf, want.String())
					}
				}()
			}
			wg.Wait()
		})
	}
}

// Blocks larger than a socket buffer take the overlapped path of a ring step.
func TestAllGatherLargeBlocks(t *testing.T) {
	const n, blk = 3, 1 << 20
	eps, errs, _ := world(t, n, false, 5*time.Second, nil)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for r := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, n*blk)
			for i := r * blk; i < (r+1)*blk; i++ {
				buf[i] = byte(r + 1)
			}
			if err := eps[r].AllGather(buf); err != nil {
				t.Error(err)
				return
			}
			for p := 0; p < n; p++ {
				if buf[p*blk] != byte(p+1) || buf[(p+1)*blk-1] != byte(p+1) {
					t.Errorf("rank %d: block %d not gathered", r, p)
				}
			}
		}()
	}
	wg.Wait()
	if err := eps[0].AllGather(make([]byte, 7)); err == nil || !strings.Contains(err.Error(), "does not split into 3 blocks") {
		t.Errorf("uneven all-gather: %v", err)
	}
}
