package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// hierWorld bootstraps nranks endpoints in goroutines (each its own Net, as
// processes would have) on a global init, the root with per-instance rootL
// and rank r with rankL(r).
func hierWorld(t testing.TB, extended bool, nranks, rootL int, rankL func(int) int, cfg func(rank int, c *Config)) ([]*Endpoint, []error, *Root) {
	t.Helper()
	timeout := 5 * time.Second
	rn := NewNet(Config{Timeout: timeout, IfName: "lo", Logger: quietLog, Extended: extended, PerInstance: rootL})
	root := loopRoot(t, rn, nranks, true)
	all := make([]int, nranks)
	for r := range all {
		all[r] = r
	}
	eps, errs := startRanks(t, root, nranks, true, all, func(r int) Config {
		c := Config{Timeout: timeout, IfName: "lo", Logger: quietLog, Extended: extended, PerInstance: rankL(r)}
		if cfg != nil {
			cfg(r, &c)
		}
		return c
	})
	return eps, errs, root
}

func same(l int) func(int) int { return func(int) int { return l } }

func TestHierShape(t *testing.T) {
	for _, c := range []struct{ n, l int }{{4, 2}, {10, 4}, {9, 4}, {64, 8}, {5, 1}, {7, 6}} {
		seen := map[int]int{}
		for r := range c.n {
			s := newShape(r, c.n, c.l)
			if s.h != r/c.l || s.local != r%c.l || s.hn != (c.n+c.l-1)/c.l {
				t.Fatalf("n=%d l=%d rank %d: shape %+v", c.n, c.l, r, *s)
			}
			// Each intra ring is a cycle over its instance, in rank order.
			if p := newShape(s.intraNext(), c.n, c.l); p.h != s.h || p.intraPrev() != r {
				t.Errorf("n=%d l=%d: rank %d's intra successor %d does not have it as predecessor", c.n, c.l, r, s.intraNext())
			}
			seen[s.h]++
		}
		for h := range (c.n + c.l - 1) / c.l {
			if want := min(c.l, c.n-h*c.l); seen[h] != want {
				t.Errorf("n=%d l=%d: instance %d has %d ranks, want %d", c.n, c.l, h, seen[h], want)
			}
		}
	}
	if Hierarchical(true, 8, 8) || Hierarchical(false, 9, 8) || Hierarchical(true, 9, 0) || !Hierarchical(true, 9, 8) {
		t.Error("dispatch: hierarchical iff global && nranks > L (L set)")
	}
}

// The worlds of docs/bootstrap-hierarchy.md#tests in-process, both framings: every rank has every
// listen address, the 112-byte peer-record all-gather gives identical,
// correct tables, and point-to-point still works between instances.
func TestHierWorld(t *testing.T) {
	shapes := []struct{ n, l int }{{4, 2}, {10, 4}, {32, 8}, {9, 4}, {5, 1}}
	if !testing.Short() {
		shapes = append(shapes, struct{ n, l int }{64, 8})
	}
	for _, c := range shapes {
		for _, ext := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dx%d extended=%v", c.n, c.l, ext), func(t *testing.T) {
				eps, errs, root := hierWorld(t, ext, c.n, c.l, same(c.l), nil)
				for r, err := range errs {
					if err != nil {
						t.Fatalf("rank %d: %v", r, err)
					}
				}
				if err := root.Wait(); err != nil {
					t.Fatal(err)
				}
				for r, e := range eps {
					if h, l := e.Hier(); !h || l != c.l {
						t.Fatalf("rank %d: Hier() = %v, %d", r, h, l)
					}
					if e.ClusterID() != root.ClusterID() {
						t.Errorf("rank %d: cluster %#x, root %#x", r, e.ClusterID(), root.ClusterID())
					}
					for p, a := range e.Peers() {
						if a != eps[p].Addr() {
							t.Fatalf("rank %d sees rank %d at %s, it listens at %s", r, p, a, eps[p].Addr())
						}
					}
				}
				const b = abi.SizeofNcclPeerInfo
				tables := make([][]byte, c.n)
				var wg sync.WaitGroup
				for r, e := range eps {
					wg.Add(1)
					go func() {
						defer wg.Done()
						buf := make([]byte, b*c.n)
						for i := range b {
							buf[r*b+i] = byte(r*7 + i)
						}
						if err := e.AllGather(buf); err != nil {
							t.Errorf("rank %d: %v", r, err)
						}
						tables[r] = buf
						// Across instances: the first rank to the last.
						switch r {
						case 0:
							if err := e.Send(c.n-1, []byte("hi")); err != nil {
								t.Error(err)
							}
						case c.n - 1:
							got := make([]byte, 2)
							if err := e.Recv(0, got); err != nil || string(got) != "hi" {
								t.Errorf("recv %q %v", got, err)
							}
						}
					}()
				}
				wg.Wait()
				for r := range c.n {
					for i := range b {
						if tables[0][r*b+i] != byte(r*7+i) {
							t.Fatalf("rank 0's table: record %d byte %d is %d, want %d", r, i, tables[0][r*b+i], byte(r*7+i))
						}
					}
				}
				for r := range tables {
					if !bytes.Equal(tables[r], tables[0]) {
						t.Fatalf("rank %d gathered a table other than rank 0's", r)
					}
				}
			})
		}
	}
}

// Large instance blocks take the overlapped ring step on the leaders' ring.
func TestHierAllGatherLargeBlocks(t *testing.T) {
	const n, l, blk = 6, 2, 1 << 19
	eps, errs, _ := hierWorld(t, false, n, l, same(l), nil)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for r, e := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, n*blk)
			for i := r * blk; i < (r+1)*blk; i++ {
				buf[i] = byte(r + 1)
			}
			if err := e.AllGather(buf); err != nil {
				t.Error(err)
				return
			}
			for p := range n {
				if buf[p*blk] != byte(p+1) || buf[(p+1)*blk-1] != byte(p+1) {
					t.Errorf("rank %d: block %d not gathered", r, p)
				}
			}
		}()
	}
	wg.Wait()
}

// N <= L, a non-global init or L unset: flat, as before.
func TestHierDispatchFlat(t *testing.T) {
	eps, errs, root := hierWorld(t, false, 4, 4, same(4), nil)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Wait(); err != nil {
		t.Fatal(err)
	}
	if h, _ := eps[0].Hier(); h || eps[0].Next() != 1 || eps[3].Next() != 0 {
		t.Errorf("a world of one instance is flat: hier=%v next=%d", h, eps[0].Next())
	}
}

// Every refusal of a hierarchical world, in both framings: every rank fails
// within the timeout and the root's error (and, extended, every rank's)
// names the fault.
func TestHierRefusals(t *testing.T) {
	skew := func(bad int) func(int, *Config) {
		return func(r int, c *Config) {
			if r == bad {
				c.Versions = SpecVersions{NRTGit: "0000skew"}
			}
		}
	}
	wrongInstance := func(bad int) func(int, *Config) {
		return func(r int, c *Config) {
			if r == bad {
				c.Hooks = &Hooks{WriteRecord: func(conn net.Conn, frame []byte, payload int) error {
					binary.LittleEndian.PutUint32(frame[payload+60:], 0)
					_, err := conn.Write(frame)
					return err
				}}
			}
		}
	}
	cases := []struct {
		name  string
		rankL func(int) int
		cfg   func(int, *Config)
		want  string
	}{
		{"wrong L", func(r int) int { return map[bool]int{true: 2, false: 4}[r == 5] }, nil, "rank 5 reports per_instance 2, the root 4"},
		{"flat rank", func(r int) int { return map[bool]int{true: 0, false: 4}[r == 6] }, nil, "rank 6 sent a flat 56-byte INFO_TO_ROOT"},
		{"wrong instance", same(4), wrongInstance(5), "claims instance 0, but rank 5 with per_instance 4 is in instance 1: a rank in the wrong instance"},
		{"skewed git hash", same(4), skew(9), "rank 9"},
	}
	for _, c := range cases {
		for _, ext := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s extended=%v", c.name, ext), func(t *testing.T) {
				start := time.Now()
				_, errs, root := hierWorld(t, ext, 10, 4, c.rankL, c.cfg)
				rerr := root.Wait()
				if rerr == nil || !strings.Contains(rerr.Error(), c.want) {
					t.Fatalf("root: %v, want %q", rerr, c.want)
				}
				for r, err := range errs {
					if err == nil {
						t.Errorf("rank %d succeeded", r)
					} else if ext && !strings.Contains(err.Error(), c.want) && !strings.Contains(err.Error(), "git") {
						t.Errorf("rank %d: %v, want %q", r, err, c.want)
					}
				}
				// A rank that had not reached the root before it failed
				// retries a refused connect for the whole timeout (5 s).
				if d := time.Since(start); d > 6*time.Second {
					t.Errorf("took %s, over the timeout", d)
				}
			})
		}
	}
}

// A hierarchical rank at a flat root: refused by name.
func TestHierRankAtFlatRoot(t *testing.T) {
	for _, ext := range []bool{false, true} {
		_, errs, root := hierWorld(t, ext, 6, 0, func(r int) int { return map[bool]int{true: 2, false: 0}[r == 3] }, nil)
		rerr := root.Wait()
		if rerr == nil || !strings.Contains(rerr.Error(), "rank 3 sent a hierarchical INFO_TO_ROOT (extInfoHier, per_instance 2), this root is flat (per_instance unset)") {
			t.Fatalf("extended=%v root: %v", ext, rerr)
		}
		for r, err := range errs {
			if err == nil {
				t.Errorf("extended=%v rank %d succeeded", ext, r)
			}
		}
	}
}

func TestParsePerInstance(t *testing.T) {
	for _, s := range []string{"0", "-1", "x", "65537", "4 ", "1e3"} {
		if _, err := ParsePerInstance("L", s); err == nil || !strings.Contains(err.Error(), "1..65536") {
			t.Errorf("%q: %v", s, err)
		}
	}
	if l, err := ParsePerInstance("L", "8"); l != 8 || err != nil {
		t.Errorf("8: %d %v", l, err)
	}
	c, err := ConfigFromEnv(func(k string) string {
		if k == abi.EnvBootstrapPerInstance {
			return "0"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), abi.EnvBootstrapPerInstance) {
		t.Errorf("ConfigFromEnv with L=0: %+v %v", c, err)
	}
}

// takeReply checks a hierarchical reply against the rank's own arithmetic.
func TestHierReplyChecked(t *testing.T) {
	e := &Endpoint{hier: newShape(5, 10, 4)}
	good := abi.BootstrapRootReplyHier{IntraNext: EncodeAddr(loopAny), Instance: 1, Ninstances: 3, LocalRank: 1, LocalN: 4}
	b := make([]byte, abi.SizeofBootstrapRootReplyHier)
	good.MarshalTo(b)
	if _, _, err := e.takeReply(b); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*abi.BootstrapRootReplyHier){
		"instance":   func(r *abi.BootstrapRootReplyHier) { r.Instance = 2 },
		"local_n":    func(r *abi.BootstrapRootReplyHier) { r.LocalN = 2 },
		"inter_next": func(r *abi.BootstrapRootReplyHier) { r.InterNext = EncodeAddr(loopAny) },
		"intra_next": func(r *abi.BootstrapRootReplyHier) { r.IntraNext = abi.NcclSocketAddress{} },
	} {
		r := good
		f(&r)
		r.MarshalTo(b)
		if _, _, err := e.takeReply(b); err == nil {
			t.Errorf("a reply with a wrong %s was taken", name)
		}
	}
	// A leader needs its inter-instance successor.
	e = &Endpoint{hier: newShape(4, 10, 4)}
	good.LocalRank = 0
	good.MarshalTo(b)
	if _, _, err := e.takeReply(b); err == nil || !strings.Contains(err.Error(), "inter-instance successor") {
		t.Errorf("leader without inter_next: %v", err)
	}
}

// FuzzHierReply: any 96 bytes as a hierarchical reply, for any shape, are
// taken or refused, never a panic.
func FuzzHierReply(f *testing.F) {
	f.Add(make([]byte, abi.SizeofBootstrapRootReplyHier), 5, 10, 4)
	f.Fuzz(func(t *testing.T, p []byte, rank, n, l int) {
		if n < 1 || n > 1024 || l < 1 || l > 1024 || rank < 0 || rank >= n {
			return
		}
		b := make([]byte, abi.SizeofBootstrapRootReplyHier)
		copy(b, p)
		e := &Endpoint{hier: newShape(rank, n, l)}
		_, _, _ = e.takeReply(b)
	})
}

// FuzzRootRecord: a root of either shape given any record of any size names
// it or takes it, never a panic.
func FuzzRootRecord(f *testing.F) {
	f.Add(make([]byte, abi.SizeofExtInfoHier), 4, true)
	f.Add(make([]byte, abi.SizeofExtInfoGlobal), 0, true)
	f.Fuzz(func(t *testing.T, p []byte, l int, global bool) {
		if l < 0 || l > PerInstanceMax || len(p) > maxRecord {
			return
		}
		r := &Root{nranks: 8, global: global, perInstance: l, hier: Hierarchical(global, 8, l)}
		_ = r.wrongShape("peer x", len(p), p)
		if size, _ := r.recordSize(); len(p) == size {
			rc := &rankConn{rank: 3}
			r.unmarshalRecord(rc, p)
			_ = r.admitHier(rc)
		}
	})
}

// TestConnectDelay holds the two staggers apart: the flat path keeps
// upstream 2.9.9's rank ms over BOOTSTRAP_DELAY_CONNECT_RANKS ranks, the
// hierarchical one waits rank/BOOTSTRAP_HIER_STAGGER_RATE s only past
// BOOTSTRAP_HIER_STAGGER_THRESHOLD ranks (docs/bootstrap-hierarchy.md#stagger).
func TestConnectDelay(t *testing.T) {
	flatN := int(abi.BootstrapDelayConnectRanks)
	hierN := int(abi.BootstrapHierStaggerThreshold)
	rate := time.Duration(abi.BootstrapHierStaggerRate)
	for _, c := range []struct {
		hier    bool
		rank, n int
		want    time.Duration
	}{
		{false, 5, flatN, 0},
		{false, 5, flatN + 1, 5 * time.Millisecond},
		{false, 255, 256, 255 * time.Millisecond},
		{true, 255, hierN, 0},
		{true, 100, 200, 0},
		{true, 0, hierN + 1, 0},
		{true, hierN, hierN + 1, time.Duration(hierN) * time.Second / rate},
		{true, 6999, 100000, 6999 * time.Second / rate},
	} {
		if got := connectDelay(c.hier, c.rank, c.n); got != c.want {
			t.Errorf("connectDelay(hier %v, rank %d, nranks %d) = %v, want %v", c.hier, c.rank, c.n, got, c.want)
		}
	}
	// The hierarchical stagger is never longer than the flat one.
	for _, n := range []int{129, 256, 257, 1000, 65536} {
		for _, r := range []int{0, 1, n / 2, n - 1} {
			if h, f := connectDelay(true, r, n), connectDelay(false, r, n); h > f {
				t.Errorf("rank %d of %d: hierarchical stagger %v > flat %v", r, n, h, f)
			}
		}
	}
}

// TestConnectDelayBothFramings: a rank of a large world waits its connect
// stagger before it reaches the root in either framing, as the C side does
// in both (docs/bootstrap-hierarchy.md#stagger). Before the stagger moved
// into dialRoot the extended rank connected at once.
func TestConnectDelayBothFramings(t *testing.T) {
	const rank, n = 100, int(abi.BootstrapDelayConnectRanks) + 1 // flat: rank ms
	want := connectDelay(false, rank, n)
	if want < 50*time.Millisecond {
		t.Fatalf("connectDelay(flat, %d, %d) = %v: too short to measure", rank, n, want)
	}
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		root, accepted := silentRoot(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := mk().InitFlat(ctx, root, rank, n, false)
			done <- err
		}()
		select {
		case <-accepted:
		case err := <-done:
			t.Fatalf("the rank ended before it reached the root: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("the rank never reached the root")
		}
		if got := time.Since(start); got < want*9/10 {
			t.Errorf("rank %d of %d reached the root after %v, before its stagger of %v", rank, n, got, want)
		}
		cancel()
		if err := <-done; err == nil {
			t.Error("the rank succeeded against a silent root")
		}
	})
}
