package elfread

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZMem(t *testing.T) {
	d := openDebugT(t, "/tmp/h36a-syn.so")
	g, err := d.AllTypes(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	f, _ := os.Create("/tmp/h36a-heap.prof")
	pprof.WriteHeapProfile(f)
	f.Close()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("nodes %d heap %d MB sys %d MB", g.Len(), ms.HeapAlloc>>20, ms.Sys>>20)
}
