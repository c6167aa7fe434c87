package pkgfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestStreamedNotHeld (docs/packages.md#memory): a package is streamed,
// never read into memory whole, and its members' bytes are not held once
// it is indexed. A 128 MiB plain tar (its member a hole on disk) costs far
// less than its size in allocations; three packages each holding a 12 MiB
// ELF member leave far less than one member live after they are indexed,
// and a member read again is the same bytes. (Before, the tar cost its
// size and more, io.ReadAll growing, and the three members stayed live.)
func TestStreamedNotHeld(t *testing.T) {
	dir := t.TempDir()
	const big = 128 << 20
	p := filepath.Join(dir, "big.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(rawHeader("./usr/share/model.bin", '0', big))
	if err := f.Truncate(512 + big + 1024); err != nil { // the member and the end marker: holes
		t.Fatal(err)
	}
	f.Close()
	before := allocated()
	if _, err := Open(p); err != nil {
		t.Fatal(err)
	}
	if got := allocated() - before; got > big/8 {
		t.Errorf("indexing a %d MiB tar allocated %d MiB: the package is read into memory, not streamed", big>>20, got>>20)
	}

	const member = 12 << 20
	lib := append(fakeELF("lib"), make([]byte, member)...)
	var pkgs []*Package
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	live := ms.HeapAlloc
	for i, kind := range []string{"gzip", "zstd", "gzip"} {
		p := filepath.Join(dir, "p"+kind)
		if err := os.WriteFile(p, compress(t, kind, tarOf(t, entry{name: "./usr/lib/libx.so", data: lib})), 0o644); err != nil {
			t.Fatal(err)
		}
		pkg, err := Open(p)
		if err != nil || len(pkg.Members) != 1 {
			t.Fatalf("package %d: %v", i, err)
		}
		pkgs = append(pkgs, pkg)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grew := int64(ms.HeapAlloc) - int64(live); grew > member/2 {
		t.Errorf("three indexed packages keep %d MiB live: their members' bytes are held, not read again when asked", grew>>20)
	}
	b, err := pkgs[2].Members[0].Load()
	if err != nil || len(b) != len(lib) || b[len(b)-1] != 0 || string(b[16:19]) != "lib" {
		t.Errorf("a member read again: %v", err)
	}
	runtime.KeepAlive(pkgs)
}

// allocated is the bytes allocated so far by the process.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}
