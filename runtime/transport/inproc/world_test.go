package inproc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSendRecvInOrderAndCounted(t *testing.T) {
	w, err := NewWorld(3, Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := w.Endpoint(0), w.Endpoint(2)
	for i := byte(0); i < 5; i++ {
		if err := a.Send(2, []byte{i, i, i}); err != nil {
			t.Fatal(err)
		}
	}
	for i := byte(0); i < 5; i++ {
		got := make([]byte, 3)
		if err := b.Recv(0, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, []byte{i, i, i}) {
			t.Fatalf("message %d arrived as %v", i, got)
		}
	}
	st := w.Stats()
	if st.Messages != 5 || st.Bytes != 15 || st.BySize[3] != 5 || len(w.Trace()) != 5 || w.Trace()[0] != (Message{0, 2, 3}) {
		t.Fatalf("stats %+v trace %v", st, w.Trace())
	}
	w.ResetStats()
	if w.Stats().Messages != 0 || len(w.Trace()) != 0 {
		t.Fatal("reset kept counts")
	}
}

func TestRecvFailures(t *testing.T) {
	w, _ := NewWorld(2, Options{Timeout: 50 * time.Millisecond})
	a, b := w.Endpoint(0), w.Endpoint(1)
	_ = a.Send(1, []byte{1, 2})
	if err := b.Recv(0, make([]byte, 3)); err == nil || !strings.Contains(err.Error(), "2 bytes, expected 3") {
		t.Fatalf("size mismatch: %v", err)
	}
	if err := b.Recv(0, make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "within") {
		t.Fatalf("timeout: %v", err)
	}
	for _, peer := range []int{-1, 1, 2} {
		if err := b.Send(peer, nil); err == nil {
			t.Fatalf("send to %d accepted", peer)
		}
	}
	// a closed peer fails the waiting receiver at once, after its queue drains
	_ = a.Send(1, []byte{7})
	done := make(chan error)
	go func() {
		buf := make([]byte, 1)
		if err := b.Recv(0, buf); err != nil || buf[0] != 7 {
			done <- fmt.Errorf("queued message lost: %v", err)
			return
		}
		done <- b.Recv(0, buf)
	}()
	time.Sleep(10 * time.Millisecond)
	_ = a.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("recv from a closed peer: %v", err)
	}
	if err := a.Send(1, []byte{1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send on a closed endpoint: %v", err)
	}
	if _, err := NewWorld(0, Options{}); err == nil {
		t.Fatal("empty world accepted")
	}
}

func TestAllGather(t *testing.T) {
	for _, n := range []int{1, 2, 5, 8} {
		w, _ := NewWorld(n, Options{})
		bufs := make([][]byte, n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for r := 0; r < n; r++ {
			bufs[r] = make([]byte, 4*n)
			copy(bufs[r][4*r:], fmt.Sprintf("r%03d", r))
			wg.Add(1)
			go func() { defer wg.Done(); errs[r] = w.Endpoint(r).AllGather(bufs[r]) }()
		}
		wg.Wait()
		var want strings.Builder
		for r := 0; r < n; r++ {
			fmt.Fprintf(&want, "r%03d", r)
		}
		for r := 0; r < n; r++ {
			if errs[r] != nil || string(bufs[r]) != want.String() {
				t.Fatalf("N=%d rank %d: %v %q", n, r, errs[r], bufs[r])
			}
		}
		if got := w.Stats().Messages; got != int64(n*(n-1)) {
			t.Fatalf("N=%d: %d messages, want n(n-1)", n, got)
		}
	}
	w, _ := NewWorld(3, Options{})
	if err := w.Endpoint(0).AllGather(make([]byte, 4)); err == nil {
		t.Fatal("uneven all-gather accepted")
	}
}

func TestLatencyDelaysDelivery(t *testing.T) {
	w, _ := NewWorld(2, Options{Latency: 30 * time.Millisecond})
	start := time.Now()
	_ = w.Endpoint(0).Send(1, []byte{1})
	if err := w.Endpoint(1).Recv(0, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("delivered after %s", d)
	}
}
