package nccl

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

func TestAdapterOverInProcessBootstrap(t *testing.T) {
	const n = 4
	w, _ := inproc.NewWorld(n, inproc.Options{Trace: true})
	b := inproc.NewBootstrap(w)
	ts := make([]*Transport, n)
	for r := range ts {
		var err error
		if ts[r], err = New(b, b.State(r), r, n, "get_nccl_comm"); err != nil {
			t.Fatal(err)
		}
	}
	// a ring of sends, then an all-gather
	var wg sync.WaitGroup
	errs := make([]error, n)
	got := make([][]byte, n)
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := ts[r]
			if err := tr.Send((r+1)%n, []byte{byte(r), 0xee}); err != nil {
				errs[r] = err
				return
			}
			in := make([]byte, 2)
			if err := tr.Recv((r+n-1)%n, in); err != nil {
				errs[r] = err
				return
			}
			if in[0] != byte((r+n-1)%n) {
				errs[r] = fmt.Errorf("got %v", in)
				return
			}
			all := make([]byte, 3*n)
			copy(all[3*r:], []byte{byte(r), byte(r), byte(r)})
			errs[r] = tr.AllGather(all)
			got[r] = all
		}()
	}
	wg.Wait()
	for r := 0; r < n; r++ {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		for k := 0; k < n; k++ {
			if got[r][3*k] != byte(k) {
				t.Fatalf("rank %d block %d = %v", r, k, got[r])
			}
		}
	}
	if h := b.Hints(); h["get_nccl_comm"] != 3*n || len(h) != 1 {
		t.Fatalf("hints %v", h)
	}
}

// failing is a Bootstrap whose every call returns a non-zero status.
type failing struct{ state unsafe.Pointer }

func (f *failing) BootstrapSend(s unsafe.Pointer, peer int, d []byte, h string) error {
	return f.check(s)
}
func (f *failing) BootstrapRecv(s unsafe.Pointer, peer int, d []byte, h string) error {
	return f.check(s)
}
func (f *failing) BootstrapAllGather(s unsafe.Pointer, d []byte, size int, h string) error {
	if size != 2 {
		return fmt.Errorf("size %d", size)
	}
	return f.check(s)
}
func (f *failing) check(s unsafe.Pointer) error {
	if s != f.state {
		return errors.New("state pointer not passed through")
	}
	return errors.New("status 1")
}

func TestErrorsNameThePeer(t *testing.T) {
	st := new(int)
	f := &failing{state: unsafe.Pointer(st)}
	tr, err := New(f, unsafe.Pointer(st), 1, 3, "hint")
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Send(2, []byte{1}); err == nil || !strings.Contains(err.Error(), "ncclBootstrapSend to peer 2 (1 bytes, hint): status 1") {
		t.Fatalf("%v", err)
	}
	if err := tr.Recv(0, make([]byte, 17)); err == nil || !strings.Contains(err.Error(), "ncclBootstrapRecv from peer 0 (17 bytes, hint): status 1") {
		t.Fatalf("%v", err)
	}
	if err := tr.AllGather(make([]byte, 6)); err == nil || !strings.Contains(err.Error(), "status 1") {
		t.Fatalf("%v", err)
	}
	for _, peer := range []int{-1, 1, 3} {
		if err := tr.Send(peer, nil); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("peer %d", peer)) {
			t.Fatalf("peer %d: %v", peer, err)
		}
	}
	_ = tr.Close()
	if err := tr.Recv(0, nil); err == nil {
		t.Fatal("closed transport used")
	}
	for _, bad := range []func() (*Transport, error){
		func() (*Transport, error) { return New(nil, unsafe.Pointer(st), 0, 1, "") },
		func() (*Transport, error) { return New(f, nil, 0, 1, "") },
		func() (*Transport, error) { return New(f, unsafe.Pointer(st), 1, 1, "") },
	} {
		if _, err := bad(); err == nil {
			t.Fatal("bad arguments accepted")
		}
	}
}
