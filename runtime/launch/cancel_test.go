package launch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// cancelBound is how soon after the cancel RunRank must have returned; the
// socket timeout (a minute here) is far beyond it.
const cancelBound = 100 * time.Millisecond

// runRankCancelled runs RunRank with o, cancels its context once blocked
// is closed (or, with logged given, once RunRank logged it) and a moment
// has passed, and checks that it returns promptly with a cancellation on
// its error and its report line.
func runRankCancelled(t *testing.T, o Options, blocked <-chan struct{}, logged string) {
	t.Helper()
	errw := io.Discard
	if logged != "" {
		w := &watchWriter{want: logged, seen: make(chan struct{})}
		errw, blocked = w, w.seen
	}
	t.Setenv("NEURON_CCOM_SOCK_TIMEOUT", "60")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out bytes.Buffer
	got := make(chan error, 1)
	go func() { got <- RunRank(ctx, o, &out, errw) }()
	select {
	case <-blocked:
	case err := <-got:
		t.Fatalf("returned before it blocked: %v\n%s", err, out.String())
	case <-time.After(10 * time.Second):
		t.Fatal("never reached the wait")
	}
	select {
	case err := <-got:
		t.Fatalf("returned before the cancel: %v\n%s", err, out.String())
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
	t.Logf("%s after the cancel: %v\n%s", took, err, out.String())
	if took > cancelBound {
		t.Errorf("returned %s after the cancel, want within %s", took, cancelBound)
	}
	if !errors.Is(err, ErrFailed) || !errors.Is(err, context.Canceled) {
		t.Errorf("%v: want ErrFailed wrapping context.Canceled", err)
	}
	if f := worldprog.ParseLine(out.String()); !strings.Contains(f["error"], "cancelled") {
		t.Errorf("report line %q: want its error to say cancelled", out.String())
	}
}

// TestRunRankCancelWaitingForRoot: rank 1's root takes its record and
// never answers.
func TestRunRankCancelWaitingForRoot(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		close(accepted)
		_, _ = io.Copy(io.Discard, c)
	}()
	runRankCancelled(t, Options{Rank: 1, NRanks: 2, RootID: ln.Addr().String()}, accepted, "")
}

// TestRunRankCancelServingRoot: rank 0 serves a root whose rank 1 never
// comes.
func TestRunRankCancelServingRoot(t *testing.T) {
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	runRankCancelled(t, Options{Rank: 0, NRanks: 2, RootID: root}, nil, "bootstrap root listening")
}

// TestRunRankCancelInExchange: the world is up, but rank 1 (a bare
// bootstrap here) never takes part in the per-NC exchange that follows.
func TestRunRankCancelInExchange(t *testing.T) {
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan struct{})
	go func() {
		n := tcp.NewNet(tcp.Config{Timeout: time.Minute})
		e, err := n.InitComm(t.Context(), netip.MustParseAddrPort(root), 1, 2, true)
		if err != nil {
			return
		}
		defer e.Close()
		close(joined)
		<-t.Context().Done()
	}()
	runRankCancelled(t, Options{Rank: 0, NRanks: 2, RootID: root}, joined, "")
}

// watchWriter closes seen once want has been written to it.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}
