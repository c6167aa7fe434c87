package main

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// The star reaches the agreement the bench credits it with: one id, one
// address table, and a verdict that one odd signature turns to false.
func TestStar(t *testing.T) {
	const n = 3
	for _, odd := range []int{-1, 1} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
		if err != nil {
			t.Fatal(err)
		}
		root := ln.Addr().(*net.TCPAddr).AddrPort()
		served := make(chan error, 1)
		go func() { served <- serveStar(ctx, ln, n) }()
		res := make([]starResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r := 0; r < n; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sig := [16]byte{1}
				if r == odd {
					sig[0] = 2
				}
				res[r], errs[r] = joinStar(ctx, star{rank: r, nranks: n, root: root, timeout: 5 * time.Second}, sig)
			}()
		}
		wg.Wait()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		cancel()
		for r := range res {
			if errs[r] != nil {
				t.Fatal(errs[r])
			}
			if res[r].Valid != (odd < 0) || res[r].ID != res[0].ID || len(res[r].Peers) != n || res[r].Peers[2] != res[0].Peers[2] {
				t.Errorf("rank %d: %+v", r, res[r])
			}
		}
	}
}

// A root whose ranks never all arrive gives up when the deadline passes
// and says how many came.
func TestStarDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	err = serveStar(ctx, ln, 2)
	if err == nil || !strings.Contains(err.Error(), "0 of 2 ranks arrived") {
		t.Fatalf("got %v, want the root to give up with 0 of 2 ranks", err)
	}
}
