package tcp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// TestWaitEndsWhenPeersRingLinkEnds (ringgone.go): once the world is up, a
// rank whose ring neighbour goes without a word (its endpoint closed: its
// ring links end, its listener closes) and that still waits for it — a
// Recv for it to connect, a Send still connecting to it — fails within
// the grace, far inside its 10 s timeout, naming that neighbour dead with
// its address in the point-to-point phase; a Go rank that does not watch
// (Hooks.Deaf, the planted fault) waits out its own timeout instead and
// names no one. Both framings. Cost: five worlds of 4 in process, about
// 0.2 s each, the planted one its 1 s timeout.
func TestWaitEndsWhenPeersRingLinkEnds(t *testing.T) {
	const n, me, dead = 4, 1, 2
	cases := []struct {
		name     string
		extended bool
		send     bool
	}{{"default/recv", false, false}, {"default/send", false, true}, {"extended/recv", true, false}, {"extended/send", true, true}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eps, errs, _ := worldIn(t, c.extended, n, false, 10*time.Second, nil)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			addr := eps[dead].Addr()
			start := time.Now()
			eps[dead].Close()
			var err error
			if c.send {
				err = eps[me].Send(dead, []byte("x"))
			} else {
				err = eps[me].Recv(dead, make([]byte, 1))
			}
			took := time.Since(start)
			var f *ringFault
			if !errors.As(err, &f) || f.self || f.dead != dead || f.addr != addr || f.phase != abi.BootstrapPhasePeer || !errors.Is(err, errRingLinkEnded) {
				t.Fatalf("rank %d: %v; want rank %d (%s) named dead in the point-to-point phase, its ring link ended", me, err, dead, addr)
			}
			if took > 2*time.Second {
				t.Errorf("rank %d took %s to see rank %d go (timeout 10 s)", me, took, dead)
			}
			t.Logf("%s: %v", took.Round(time.Millisecond), err)
		})
	}
	t.Run("planted/deaf", func(t *testing.T) {
		eps, errs, _ := world(t, n, false, time.Second, func(r int, c *Config) {
			if r == me {
				c.Hooks = &Hooks{Deaf: true}
			}
		})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		eps[dead].Close()
		err := eps[me].Recv(dead, make([]byte, 1))
		var f *ringFault
		if !errors.As(err, &f) || !f.self || !strings.Contains(err.Error(), "did not connect within") {
			t.Fatalf("a deaf rank's wait: %v; want its own timeout, naming no one", err)
		}
		t.Logf("caught: a rank that does not watch waits out its timeout: %v", err)
	})
}
