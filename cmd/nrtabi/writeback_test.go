package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteback: the writer passes every byte to the file, in order, and
// asks for the writeback of ranges that follow each other from 0, each at
// least writebackEvery long, never past what was written.
func TestWriteback(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type span struct{ off, n int64 }
	var spans []span
	w := newWriteback(f)
	w.start = func(_ *os.File, off, n int64) { spans = append(spans, span{off, n}) }
	var want bytes.Buffer
	piece := bytes.Repeat([]byte("0123456789abcdef"), 4096*5) // 320 KiB
	for i := range 100 {
		piece[0] = byte(i)
		if _, err := w.Write(piece); err != nil {
			t.Fatal(err)
		}
		want.Write(piece)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the file holds %d bytes that are not the %d written", len(got), want.Len())
	}
	if len(spans) < 3 {
		t.Fatalf("%d writeback starts for %d MiB", len(spans), want.Len()>>20)
	}
	next := int64(0)
	for _, s := range spans {
		if s.off != next || s.n < writebackEvery || s.off+s.n > int64(want.Len()) {
			t.Fatalf("writeback of [%d, +%d) after %d: want ranges that follow each other from 0, of at least %d bytes, inside the %d written", s.off, s.n, next, writebackEvery, want.Len())
		}
		next = s.off + s.n
	}
	// The real start on a real file is harmless.
	startWriteback(f, 0, int64(want.Len()))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
