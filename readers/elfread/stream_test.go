package elfread

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// compressedObject builds a shared object whose first unit declares
// first_s and whose other units hold filler structs, with .debug_info
// compressed the way gcc flag -gz=KIND writes it.
func compressedObject(t testing.TB, kind string) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	srcs := []string{"a_first.c"}
	if err := writeFile(dir, "a_first.c", "struct first_s { int a; long b; } first;\n"); err != nil {
		t.Fatal(err)
	}
	for u := range 16 {
		var b strings.Builder
		for s := range 400 {
			fmt.Fprintf(&b, "struct fill%d_%d { int m0; long m1; char m2[%d]; double m3; void *m4; short m5; unsigned m6; float m7; char *m8; long long m9; };\n", u, s, s+1)
		}
		name := fmt.Sprintf("fill%02d.c", u)
		if err := writeFile(dir, name, b.String()); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, name)
	}
	if err := cc.Shared(dir, "libz.so", "libz.so", "", srcs, "-fno-eliminate-unused-debug-types", "-gz="+kind); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "libz.so")
}

func mustOpenDebug(t testing.TB, path string) *Debug {
	t.Helper()
	d, err := OpenDebug(context.Background(), path, Lookup{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestStreamStopsEarly: a struct of the first unit is found having
// inflated a fraction of a compressed .debug_info; a struct that exists
// nowhere inflates all of it, and both agree with the plain reading.
func TestStreamStopsEarly(t *testing.T) {
	for _, kind := range []string{"zlib", "zlib-gnu"} {
		t.Run(kind, func(t *testing.T) {
			lib := compressedObject(t, kind)
			d := mustOpenDebug(t, lib)
			if d.infoZ == nil {
				t.Fatalf("%s: .debug_info is not read as a stream", kind)
			}
			found, err := d.FindStructs([][]string{{"first_s"}})
			if err != nil || found[0] == nil {
				t.Fatalf("first_s: %v %v", found, err)
			}
			if got, all := d.infoZ.Avail(), len(d.info); got*4 > all {
				t.Errorf("found first_s after inflating %d of %d bytes; want at most a quarter", got, all)
			}
			if _, err := d.Types().Struct(found[0].Offset); err != nil {
				t.Fatal(err)
			}
			found, err = d.FindStructs([][]string{{"no_such_s"}})
			if err != nil || found[0] != nil {
				t.Fatalf("no_such_s: %v %v", found, err)
			}
			if got, all := d.infoZ.Avail(), len(d.info); got != all {
				t.Errorf("a full scan inflated %d of %d bytes", got, all)
			}
		})
	}
}

// TestStreamCorruptTail: a compressed stream damaged near its end still
// gives the structs before the damage, and a scan that reaches the damage
// fails with a one-line decompression error instead of reading zeros.
func TestStreamCorruptTail(t *testing.T) {
	lib := compressedObject(t, "zlib")
	bad := corruptDebugInfoTail(t, lib)
	d := mustOpenDebug(t, bad)
	if found, err := d.FindStructs([][]string{{"first_s"}}); err != nil || found[0] == nil {
		t.Fatalf("first_s before the damage: %v %v", found, err)
	}
	_, err := d.FindStructs([][]string{{"no_such_s"}})
	if err == nil || !strings.Contains(err.Error(), "cannot decompress") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("scan into the damage: %v; want one line naming the decompression", err)
	}
}

// BenchmarkFindCompressed: finding a struct of the first unit, and
// scanning for one that exists nowhere, in a zlib-compressed .debug_info.
func BenchmarkFindCompressed(b *testing.B) {
	lib := compressedObject(b, "zlib")
	for _, want := range []string{"first_s", "no_such_s"} {
		b.Run(want, func(b *testing.B) {
			for b.Loop() {
				obj, err := Open(lib)
				if err != nil {
					b.Fatal(err)
				}
				d, err := FindDebug(context.Background(), obj, Lookup{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := d.FindStructs([][]string{{want}}); err != nil {
					b.Fatal(err)
				}
				obj.Close()
			}
		})
	}
}

// BenchmarkDistributionLibc: libc6-dbg's compressed DWARF 5, reached from
// libc.so.6 by build-id, for a struct of an early unit and for one that
// exists nowhere (skipped without libc6-dbg).
func BenchmarkDistributionLibc(b *testing.B) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	obj, err := Open(libc)
	if err != nil {
		b.Skipf("skipping: %s: %v", libc, err)
	}
	d, err := FindDebug(context.Background(), obj, Lookup{Dirs: DefaultDebugDirs})
	obj.Close()
	if err != nil || d.Via != ViaBuildID {
		b.Skipf("skipping: libc6-dbg is not installed (%v)", err)
	}
	d.Close()
	for _, want := range []string{"pthread_mutex_t", "no_such_s"} {
		b.Run(want, func(b *testing.B) {
			for b.Loop() {
				obj, err := Open(libc)
				if err != nil {
					b.Fatal(err)
				}
				d, err := FindDebug(context.Background(), obj, Lookup{Dirs: DefaultDebugDirs})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := d.FindStructs([][]string{{want}}); err != nil {
					b.Fatal(err)
				}
				d.Close()
				obj.Close()
			}
		})
	}
}

// corruptDebugInfoTail is a copy of lib whose compressed .debug_info ends in
// 64 flipped bytes: the stream's check, not its length, must catch it.
func corruptDebugInfoTail(t *testing.T, lib string) string {
	t.Helper()
	obj, err := Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	s := obj.File.Section(".debug_info")
	off, size := s.Offset, s.FileSize
	obj.Close()
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	for i := off + size - 64; i < off+size; i++ {
		data[i] ^= 0x5a
	}
	bad := filepath.Join(t.TempDir(), "libbad.so")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return bad
}
