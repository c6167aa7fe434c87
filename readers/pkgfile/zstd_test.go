package pkgfile

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestZstdWindow: a zstd stream that refers back further than the 8 MiB
// window the standard decoder holds (zstd --long) is refused in one line
// naming the member and the fix, and the same tar without --long reads.
func TestZstdWindow(t *testing.T) {
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("skipping: zstd(1) not found (the zstd package ships it)")
	}
	run := make([]byte, 64<<10)
	rand.NewChaCha8([32]byte{1}).Read(run)
	data := append(append(append([]byte(nil), run...), make([]byte, zstdWindow+64<<10)...), run...)
	dir := t.TempDir()
	src := filepath.Join(dir, "far.tar")
	if err := os.WriteFile(src, tarOf(t, entry{name: "./far.bin", data: data}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--long=24"}, "far.tar.zst: member ./far.bin: a zstd frame refers back further than the 8 MiB window"},
		{nil, ""},
	} {
		out := src + ".zst"
		args := append(append([]string{"-q", "-f", "-1"}, c.args...), src, "-o", out)
		if b, err := exec.Command("zstd", args...).CombinedOutput(); err != nil {
			t.Fatalf("zstd %v: %v\n%s", args, err, b)
		}
		_, err := Open(out)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("zstd %v: want it read, got %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "repack") || strings.Contains(err.Error(), "\n")):
			t.Errorf("zstd %v: want one line %q, got %v", c.args, c.want, err)
		}
	}
}

// TestZstdView: the ELF view zstdReader puts before a stream reads as
// the header followed by the stream, across the seam and to the end.
func TestZstdView(t *testing.T) {
	whole := []byte("head0123456789")
	v := &elfView{head: whole[:4], src: io.NewSectionReader(bytes.NewReader(whole[4:]), 0, 10)}
	for off := 0; off <= len(whole); off++ {
		for n := 1; off+n <= len(whole); n++ {
			p := make([]byte, n)
			if got, err := v.ReadAt(p, int64(off)); got != n || err != nil && err != io.EOF || !bytes.Equal(p, whole[off:off+n]) {
				t.Fatalf("ReadAt(%d bytes, %d) = %d %v %q, want %q", n, off, got, err, p, whole[off:off+n])
			}
		}
		if got, err := v.ReadAt(make([]byte, len(whole)-off+1), int64(off)); got != len(whole)-off || err != io.EOF {
			t.Fatalf("ReadAt past the end at %d = %d %v, want %d and EOF", off, got, err, len(whole)-off)
		}
	}
}
