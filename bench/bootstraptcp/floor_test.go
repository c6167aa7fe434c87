package main

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The floor reaches the star's agreement through its rings and the two
// get_nccl_comm calls, over the instances and through the root, on every
// shape (one instance, a short last one, instances of one): one id, the
// ring neighbours the launcher checks, and a verdict one odd signature
// turns to false on every rank, including the odd rank's instance-mates
// and the other instances (the AND really crosses both levels).
func TestFloor(t *testing.T) {
	for _, tc := range []struct{ n, l int }{{7, 3}, {8, 3}, {6, 0}, {5, 1}, {9, 9}} {
		for _, viaRoot := range []bool{false, true} {
			for _, odd := range []int{-1, 1, tc.n - 1} {
				res, errs := floorWorld(t, tc.n, tc.l, viaRoot, odd)
				for r := range res {
					l := tc.l
					if l == 0 {
						l = tc.n
					}
					prev, next := worldprog.RingNeighbours(r, tc.n, l)
					switch {
					case odd < 0 && errs[r] != nil:
						t.Errorf("n=%d l=%d viaRoot=%v rank %d: %v", tc.n, tc.l, viaRoot, r, errs[r])
					case odd >= 0 && (errs[r] == nil || !strings.Contains(errs[r].Error(), "signature")):
						t.Errorf("n=%d l=%d viaRoot=%v odd=%d rank %d: got %v, want the verdict failed", tc.n, tc.l, viaRoot, odd, r, errs[r])
					case res[r].Prev != prev || res[r].Next != next:
						t.Errorf("n=%d l=%d rank %d: ring %d/%d, want %d/%d", tc.n, tc.l, r, res[r].Prev, res[r].Next, prev, next)
					case res[r].UID != res[0].UID || res[r].UID == "":
						t.Errorf("n=%d l=%d rank %d: id %q, rank 0 has %q", tc.n, tc.l, r, res[r].UID, res[0].UID)
					case res[r].TAgree.Before(res[r].TBoot):
						t.Errorf("rank %d: agreed before its boot", r)
					}
				}
			}
		}
	}
}

// A rank that never joins fails the floor's world within the deadline,
// every rank with a reason, none hanging.
func TestFloorMissingRank(t *testing.T) {
	_, errs := floorWorld(t, 5, 2, false, -2)
	for r, err := range errs[:4] {
		if err == nil {
			t.Errorf("rank %d: no error with rank 4 missing", r)
		}
	}
}

// floorWorld runs n floor ranks in this process; rank odd signs
// otherwise; odd == -2: the last rank never starts.
func floorWorld(t *testing.T, n, l int, viaRoot bool, odd int) ([]*worldprog.Report, []error) {
	t.Helper()
	timeout := 5 * time.Second
	if odd == -2 {
		timeout = 500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	root := ln.Addr().(*net.TCPAddr).AddrPort()
	rounds := 0
	if viaRoot {
		rounds = 2
	}
	served := make(chan error, 1)
	go func() { served <- serveStarRounds(ctx, ln, n, rounds) }()
	res := make([]*worldprog.Report, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		res[r] = worldprog.NewReport(r, n)
		if odd == -2 && r == n-1 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sig := [16]byte{1}
			if r == odd {
				sig[0] = 2
			}
			f := floor{star: star{rank: r, nranks: n, root: root, timeout: timeout}, l: l, viaRoot: viaRoot}
			errs[r] = joinFloor(ctx, f, sig, res[r])
		}()
	}
	wg.Wait()
	cancel()
	if err := <-served; err != nil && odd != -2 {
		t.Fatalf("n=%d l=%d: the root: %v", n, l, err)
	}
	return res, errs
}
