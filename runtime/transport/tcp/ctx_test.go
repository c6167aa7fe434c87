package tcp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// ctxTimeout is a socket timeout no test below may reach: a wait that ends
// does so because its context was cancelled.
const ctxTimeout = 30 * time.Second

// cancelBound is how soon after the cancel a wait must have returned.
const cancelBound = 100 * time.Millisecond

// endsOnCancel runs wait, lets it block (until blocked is closed, then a
// moment more), cancels ctx and checks that wait returns within
// cancelBound with an error that says so and wraps context.Canceled.
func endsOnCancel(t *testing.T, cancel context.CancelFunc, blocked <-chan struct{}, wait func() error, wants ...string) {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- wait() }()
	select {
	case <-blocked:
	case err := <-got:
		t.Fatalf("returned before it blocked: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("never reached the wait")
	}
	select {
	case err := <-got:
		t.Fatalf("returned before the cancel: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	start := time.Now()
	cancel()
	var err error
	select {
	case err = <-got:
	case <-time.After(20 * cancelBound):
		t.Fatalf("still waiting %s after the cancel", 20*cancelBound)
	}
	took := time.Since(start)
	t.Logf("%s after the cancel: %v", took, err)
	if took > cancelBound {
		t.Errorf("returned %s after the cancel, want within %s", took, cancelBound)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%v: want an error wrapping context.Canceled", err)
	}
	for _, w := range append([]string{"cancelled"}, wants...) {
		if err != nil && !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
}

// closedNow is a channel already closed: the wait blocks at once.
func closedNow() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func bothFramings(t *testing.T, f func(t *testing.T, net func() *Net)) {
	t.Run("upstream", func(t *testing.T) { f(t, func() *Net { return testNet(t, ctxTimeout) }) })
	t.Run("extended", func(t *testing.T) { f(t, func() *Net { return testNetExt(t, ctxTimeout) }) })
}

// silentRoot listens, accepts and reads whatever comes without a word back;
// accepted closes at the first connection.
func silentRoot(t *testing.T) (netip.AddrPort, <-chan struct{}) {
	t.Helper()
	ln := loopbackListener(t)
	accepted := make(chan struct{})
	go func() {
		first := true
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if first {
				close(accepted)
				first = false
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), accepted
}

func TestCancelEndsRankWaitingForRoot(t *testing.T) {
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		root, accepted := silentRoot(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		endsOnCancel(t, cancel, accepted, func() error {
			_, err := mk().InitFlat(ctx, root, 1, 2, false)
			return err
		}, "rank 1: ")
	})
}

func TestCancelEndsRankDialingAbsentRoot(t *testing.T) {
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		// Nobody listens on port 1: the rank retries its connect until the
		// timeout, or the cancel.
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		endsOnCancel(t, cancel, closedNow(), func() error {
			_, err := mk().InitFlat(ctx, netip.MustParseAddrPort("127.0.0.1:1"), 0, 2, false)
			return err
		}, "rank 0: ")
	})
}

func TestCancelEndsRootWaitingForRanks(t *testing.T) {
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		r, err := mk().CreateRoot(ctx, loopAny, 3, true)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		endsOnCancel(t, cancel, closedNow(), r.Wait, "cancelled before the world was complete")
	})
}

func TestCancelEndsRootReadingSilentRank(t *testing.T) {
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		r, err := mk().CreateRoot(ctx, loopAny, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		// A "rank" that connects and never sends its record.
		c, err := net.Dial("tcp", r.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		endsOnCancel(t, cancel, closedNow(), r.Wait, "cancelled before the world was complete")
	})
}

func TestCancelEndsRankWiringRing(t *testing.T) {
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		root, err := mk().CreateRoot(t.Context(), loopAny, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		// Rank 1 has its reply and then stalls: rank 0 waits for its ring
		// predecessor.
		release := make(chan struct{})
		defer close(release)
		stalled := NewNet(Config{Timeout: ctxTimeout, IfName: "lo", Logger: quietLog, Extended: mk().cfg.Extended,
			Hooks: &Hooks{AfterReply: func() { <-release }}})
		go func() {
			if e, err := stalled.InitFlat(t.Context(), root.Addr(), 1, 2, false); err == nil {
				e.Close()
			}
		}()
		replied := make(chan struct{})
		n0 := NewNet(Config{Timeout: ctxTimeout, IfName: "lo", Logger: quietLog, Extended: mk().cfg.Extended,
			Hooks: &Hooks{AfterReply: func() { close(replied) }}})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		endsOnCancel(t, cancel, replied, func() error {
			_, err := n0.InitFlat(ctx, root.Addr(), 0, 2, false)
			return err
		}, "rank 0: ")
	})
}

func TestCancelEndsEndpointRecv(t *testing.T) {
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		root, err := mk().CreateRoot(t.Context(), loopAny, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var eps [2]*Endpoint
		var errs [2]error
		done := make(chan struct{})
		go func() {
			defer close(done)
			eps[1], errs[1] = mk().InitFlat(t.Context(), root.Addr(), 1, 2, false)
		}()
		eps[0], errs[0] = mk().InitFlat(ctx, root.Addr(), 0, 2, false)
		<-done
		for _, e := range eps {
			defer e.Close()
		}
		if errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
		// The world is up; rank 1 never sends: the context InitFlat was
		// given still bounds the endpoint's waits.
		endsOnCancel(t, cancel, closedNow(), func() error {
			return eps[0].Recv(1, make([]byte, 8))
		}, "rank 0: ")
	})
}

func TestParseRootIDHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := ParseRootID(ctx, "nrtabi-no-such-host.invalid:5000", ctxTimeout)
	var ce *CommIDError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("%v: want the comm id error wrapping context.Canceled", err)
	}
}

func TestCancelEndsCommsInit(t *testing.T) {
	bothFramings(t, func(t *testing.T, mk func() *Net) {
		// The comm's root (this Comms' own, from GetUniqueID) waits for a
		// rank 1 that never comes; rank 0 waits for the root's answer.
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		comms := NewComms(ctx, mk())
		defer comms.Close()
		var id UniqueID
		if err := comms.GetUniqueID(&id, 2, "test"); err != nil {
			t.Fatal(err)
		}
		endsOnCancel(t, cancel, closedNow(), func() error {
			_, err := comms.InitComm(2, &id, 0, false)
			return err
		}, "rank 0: ")
	})
}
