package elfread

import (
	"bytes"
	"compress/zlib"
	"strings"
	"testing"
)

func deflate(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func reader(t *testing.T, b []byte) *bytes.Reader {
	t.Helper()
	return bytes.NewReader(b)
}

// TestStreamInflatesOnDemand: Ensure inflates what is asked (in steps),
// never past the declared size, and the data equals the original.
func TestStreamInflatesOnDemand(t *testing.T) {
	plain := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	zr, err := zlib.NewReader(reader(t, deflate(t, plain)))
	if err != nil {
		t.Fatal(err)
	}
	z, err := newStream(".debug_info", zr, uint64(len(plain)), inflateCap(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if err := z.Ensure(100); err != nil {
		t.Fatal(err)
	}
	if z.Avail() < 100 || z.Avail() > 100+streamChunk {
		t.Fatalf("Ensure(100) inflated %d bytes", z.Avail())
	}
	if !bytes.Equal(z.Bytes()[:z.Avail()], plain[:z.Avail()]) {
		t.Fatal("inflated bytes differ")
	}
	if err := z.Ensure(len(plain) * 2); err != nil {
		t.Fatal(err)
	}
	if z.Avail() != len(plain) || !bytes.Equal(z.Bytes(), plain) {
		t.Fatalf("full inflate: %d of %d bytes, equal %v", z.Avail(), len(plain), bytes.Equal(z.Bytes(), plain))
	}
}

// TestStreamBounds: a declared size over the cap is refused before any
// allocation; a stream shorter or longer than declared is an error once
// read to the end, and the error sticks.
func TestStreamBounds(t *testing.T) {
	if _, err := newStream(".debug_info", strings.NewReader(""), 1<<40, inflateCap(4096)); err == nil || !strings.Contains(err.Error(), "decompression bomb") {
		t.Fatalf("declared 1 TiB: %v", err)
	}
	plain := bytes.Repeat([]byte{7}, 1000)
	for _, c := range []struct {
		declared int
		want     string
	}{{2000, "less than its declared"}, {999, "more than its declared"}} {
		zr, err := zlib.NewReader(reader(t, deflate(t, plain)))
		if err != nil {
			t.Fatal(err)
		}
		z, err := newStream(".debug_info", zr, uint64(c.declared), inflateCap(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		err = z.Ensure(c.declared)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("declared %d: %v, want %q", c.declared, err, c.want)
		}
		if again := z.Ensure(1); again != err {
			t.Fatalf("error did not stick: %v then %v", err, again)
		}
	}
	// Inflate of an empty section still refuses trailing data.
	zr, _ := zlib.NewReader(reader(t, deflate(t, []byte{1})))
	if _, err := inflate(".debug_str", zr, 0, inflateMin); err == nil {
		t.Fatal("a 0-byte declared section that inflates to 1 byte was accepted")
	}
}
