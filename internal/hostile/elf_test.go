package hostile

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"
)

// TestZlibZeros: the assembled bomb is a valid zlib stream of exactly n
// zeros (checksum included), so the readers see a real, well-formed bomb.
func TestZlibZeros(t *testing.T) {
	for _, n := range []int{1 << 10, 4 << 20} {
		z, err := zlibZeros(n)
		if err != nil {
			t.Fatal(err)
		}
		r, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.Copy(io.Discard, r)
		if err != nil || got != int64(n) {
			t.Fatalf("n=%d: inflated %d bytes, err %v", n, got, err)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
	}
}
