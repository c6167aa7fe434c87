package dyninput

import (
	"strings"
	"testing"
)

func table(t *testing.T) Table {
	t.Helper()
	b, err := Encode([]uint64{3, 5, 7}, []uint64{0, 3, 8}, []uint64{10, 20, 30})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := View(b)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestLayout(t *testing.T) {
	b, _ := Encode([]uint64{3, 5}, []uint64{1, 2}, []uint64{9, 8})
	if len(b) != 16+4*8*2 || Size(2) != len(b) {
		t.Fatalf("size %d", len(b))
	}
	// The documented byte positions, read back directly.
	for off, want := range map[int]uint64{16: 3, 24: 5, 32: 1, 40: 2, 48: 9, 56: 8, 64: 0, 72: 0} {
		if got := le.Uint64(b[off:]); got != want {
			t.Errorf("u64 at +%d = %d, want %d", off, got, want)
		}
	}
	if string(b[:4]) != "DYNI" || le.Uint32(b[4:]) != 2 {
		t.Errorf("header % x", b[:8])
	}
}

func TestQueries(t *testing.T) {
	tb := table(t)
	if v, err := tb.SendCountSizeBytes(1, 4); err != nil || v != 20 {
		t.Errorf("SendCountSizeBytes(1, 4) = %d, %v", v, err)
	}
	if v, err := tb.SendOffsetBytes(8, 2, 3); err != nil || v != 64 {
		t.Errorf("SendOffsetBytes(8, 2, 3) = %d, %v", v, err)
	}
	if v, err := tb.RecvPostOffsetBytes(2, 0, 3); err != nil || v != 20 {
		t.Errorf("RecvPostOffsetBytes(2, 0, 3) = %d, %v", v, err)
	}
	if err := tb.SetRecvSizeBytes(6, 4, 2, 3); err != nil {
		t.Fatal(err)
	}
	if v, _ := tb.RecvSizeBytes(2); v != 24 {
		t.Errorf("RecvSizeBytes(2) = %d, want 24", v)
	}
	if v, _ := tb.RecvSizeBytes(1); v != 0 {
		t.Errorf("RecvSizeBytes(1) = %d, want 0 (untouched)", v)
	}
}

func TestErrors(t *testing.T) {
	tb := table(t)
	for name, err := range map[string]error{
		"dst range":  func() error { _, err := tb.SendCountSizeBytes(3, 4); return err }(),
		"neg rank":   func() error { _, err := tb.SendOffsetBytes(4, -1, 3); return err }(),
		"rank_n":     func() error { _, err := tb.RecvPostOffsetBytes(4, 0, 4); return err }(),
		"set rank_n": tb.SetRecvSizeBytes(1, 1, 0, 2),
		"overflow":   func() error { _, err := tb.SendCountSizeBytes(2, 1<<62); return err }(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := View([]byte("NOPE0000000000000000")); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("bad magic: %v", err)
	}
	b, _ := Encode([]uint64{1, 2}, []uint64{0, 0}, []uint64{0, 0})
	if _, err := View(b[:len(b)-1]); err == nil {
		t.Error("short table: no error")
	}
	if _, err := Encode([]uint64{1}, nil, []uint64{0}); err == nil {
		t.Error("ragged columns: no error")
	}
	if _, err := Header(b[:8]); err == nil {
		t.Error("short header: no error")
	}
}
