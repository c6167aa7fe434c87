package inproc

import (
	"errors"
	"strings"
	"testing"
)

func TestComms(t *testing.T) {
	var c Comms
	var a, b [128]byte
	if err := c.GetUniqueID(&a, 4, "nccl init comm"); err != nil {
		t.Fatal(err)
	}
	_ = c.GetUniqueID(&b, 4, "nccl init comm")
	if a == b || !strings.Contains(string(a[:]), "rank_n=4") {
		t.Fatalf("ids %q / %q", a[:40], b[:40])
	}
	h0, err := c.InitComm(2, &a, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.InitComm(2, &a, 0, false); err == nil {
		t.Fatal("a rank joined twice")
	}
	if _, err := c.InitComm(3, &a, 1, false); err == nil {
		t.Fatal("a rank with another world size joined")
	}
	if _, err := c.InitComm(2, &a, 2, false); err == nil || err.Error() != "Invalid rank requested : 2/2" {
		t.Fatalf("bad rank: %v", err)
	}
	if _, err := c.InitComm(2, &[128]byte{}, 1, false); err == nil {
		t.Fatal("an empty id was accepted")
	}
	h1, err := c.InitComm(2, &a, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.GraphPending(h0) || c.GraphPending(h1) {
		t.Fatal("bypassed graph not pending")
	}
	if err := c.BuildGraphComm(h0); err != nil || c.GraphPending(h0) {
		t.Fatal("graph not built")
	}
	if r, n, err := c.CommInfo(h1); r != 1 || n != 2 || err != nil {
		t.Fatalf("info %d/%d %v", r, n, err)
	}
	for _, h := range []uintptr{h0, h1} {
		if err := c.FreeComm(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.FreeComm(h0); err == nil {
		t.Fatal("double free accepted")
	}
	if s := c.Stats(); s.Inits != 2 || s.Frees != 2 || s.Live != 0 || s.GraphBuilds != 1 {
		t.Fatalf("%+v", s)
	}
	c.FailUniqueID = errors.New("boom")
	if err := c.GetUniqueID(&a, 1, ""); err == nil || !strings.Contains(err.Error(), "failed neuronGetUniqueId request to NCCL") {
		t.Fatalf("%v", err)
	}
}
