package tcp

import (
	"errors"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// TestHangUpExplainedByTheRing: a point-to-point peer that hangs up with no
// abort on the connection, and whose abort (it left because rank 2 went)
// comes round the ring a moment later, is not named dead: the waiting rank
// reads its ring for hangUpGrace first and passes the heard cause on
// (docs/bootstrap-hierarchy.md#abort-frames). The planted fault, no grace,
// names the messenger.
func TestHangUpExplainedByTheRing(t *testing.T) {
	const n, me, peer, cause = 4, 1, 3, 2
	run := func(t *testing.T) error {
		eps, errs, _ := world(t, n, false, 10*time.Second, nil)
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		if err := eps[peer].Send(me, []byte("a")); err != nil {
			t.Fatal(err)
		}
		if err := eps[me].Recv(peer, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() { got <- eps[me].Recv(peer, make([]byte, 1)) }()
		time.Sleep(20 * time.Millisecond) // rank 1 waits on rank 3's next message
		// Rank 3 hangs up on rank 1 without a word, then tells its ring
		// that rank 2 went (as a rank that learnt of it does).
		eps[peer].sendMu[me].Lock()
		eps[peer].sendc[me].c.Close()
		eps[peer].sendMu[me].Unlock()
		time.Sleep(50 * time.Millisecond)
		_ = eps[peer].fail(&ringFault{phase: abi.BootstrapPhaseFlatRing, step: 0, dead: cause, addr: eps[cause].Addr(), err: errors.New("planted: its ring link ended")})
		select {
		case err := <-got:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("rank 1's receive did not end")
			return nil
		}
	}
	err := run(t)
	var ra *RingAbortError
	if !errors.As(err, &ra) || int(ra.Info.DeadRank) != cause || int(ra.Info.Reporter) != peer {
		t.Fatalf("rank %d: %v; want rank %d's abort, naming rank %d", me, err, peer, cause)
	}
	t.Logf("heard: %v", err)
	t.Run("planted/no-grace", func(t *testing.T) {
		saved := hangUpGrace
		hangUpGrace = 0
		t.Cleanup(func() { hangUpGrace = saved })
		err := run(t)
		var f *ringFault
		if !errors.As(err, &f) || f.dead != peer {
			t.Fatalf("without the grace: %v; want rank %d (the messenger) named dead", err, peer)
		}
		t.Logf("caught: without the grace the messenger is named: %v", err)
	})
}
