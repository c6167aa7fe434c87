package tcp

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// sendLink is rank e's point-to-point send connection to peer, once any
// Prepare of it has finished (a Prepare holds the peer's send lock).
func sendLink(e *Endpoint, peer int) *link {
	e.sendMu[peer].Lock()
	defer e.sendMu[peer].Unlock()
	return e.sendc[peer]
}

// TestPrepareOpensTheSends (Endpoint.Prepare): the connections a rank
// prepares are open before it sends, its sends take them (no second dial:
// the same link), the messages arrive in order, a second Prepare and
// ranks that are not peers (itself, out of range) open nothing. The
// planted fault, a send that dials anew after its peer was prepared, is
// seen by the same link check. Both framings; a world of 4 in process,
// about 0.1 s each.
func TestPrepareOpensTheSends(t *testing.T) {
	for _, extended := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", extended), func(t *testing.T) {
			eps, errs, _ := worldIn(t, extended, 4, false, 5*time.Second, nil)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			e := eps[0]
			e.Prepare([]int{2, 3, 0, -1, 4, 1})
			opened := map[int]*link{}
			for _, p := range []int{1, 2, 3} {
				if opened[p] = sendLink(e, p); opened[p] == nil {
					t.Fatalf("rank 0's connection to rank %d is not open after Prepare", p)
				}
			}
			e.Prepare([]int{1, 2, 3})
			for p, l := range opened {
				if sendLink(e, p) != l {
					t.Fatalf("a second Prepare of rank %d opened another connection", p)
				}
			}
			var wg sync.WaitGroup
			for p := 1; p < 4; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range 2 {
						got := make([]byte, 4)
						if err := eps[p].Recv(0, got); err != nil {
							t.Error(err)
						} else if want := fmt.Sprintf("0>%d%d", p, k); string(got) != want {
							t.Errorf("rank %d got %q, want %q", p, got, want)
						}
					}
				}()
			}
			for p := 1; p < 4; p++ {
				for k := range 2 {
					if err := e.Send(p, fmt.Appendf(nil, "0>%d%d", p, k)); err != nil {
						t.Fatal(err)
					}
				}
				if sendLink(e, p) != opened[p] {
					t.Fatalf("the send to rank %d dialled again instead of taking the prepared connection", p)
				}
			}
			wg.Wait()

			// The planted fault: the connection dropped from the table, so
			// the next send dials anew. The link check sees it.
			e.sendMu[1].Lock()
			e.sendc[1] = nil
			e.sendMu[1].Unlock()
			if err := e.Send(1, []byte("late")); err != nil {
				t.Logf("the planted send: %v", err)
			}
			if sendLink(e, 1) == opened[1] {
				t.Fatal("a send that dialled anew was taken for the prepared connection: the check sees nothing")
			}
			opened[1].close()
		})
	}
}

// TestPrepareOfAGonePeer: a Prepare whose dial fails (the peer, a ring
// neighbour, has gone) leaves no connection, and the send then fails as
// it always did: the peer named dead with its address in the
// point-to-point phase, within the ring-gone grace, not at the timeout.
func TestPrepareOfAGonePeer(t *testing.T) {
	const n, me, dead = 4, 1, 2
	eps, errs, _ := world(t, n, false, 10*time.Second, nil)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	addr := eps[dead].Addr()
	start := time.Now()
	eps[dead].Close()
	eps[me].Prepare([]int{dead})
	err := eps[me].Send(dead, []byte("x"))
	var f *ringFault
	if !errors.As(err, &f) || f.dead != dead || f.addr != addr || f.phase != abi.BootstrapPhasePeer {
		t.Fatalf("rank %d: %v; want rank %d (%s) named dead in the point-to-point phase", me, err, dead, addr)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("rank %d took %s to name rank %d (timeout 10 s)", me, took, dead)
	}
}
