package elfread

import (
	"context"
	"debug/dwarf"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/typemodel"
)

// structOffsets is every named struct, class and union ScanAll finds.
func structOffsets(t testing.TB, d *Debug) []uint64 {
	t.Helper()
	idx, err := d.ScanAll(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var offs []uint64
	for _, n := range idx.Types {
		if n.Kind != "enum" && n.Sized {
			offs = append(offs, uint64(n.Offset))
		}
	}
	if len(offs) == 0 {
		t.Fatal("ScanAll found no struct")
	}
	return offs
}

// TestAtConcurrentLazy: At from several goroutines on a lazy graph, where
// a hit takes the graph's lock shared and a miss decodes under it
// exclusively, gives every reader the node a later serial At gives, and
// decodes each DIE once. Under -race a lookup outside the lock, or a
// decode under the shared one, is a reported race.
func TestAtConcurrentLazy(t *testing.T) {
	withDecodeCount(t)
	d := openDebugT(t, cxxObject(t))
	offs := structOffsets(t, d)
	g := d.Types()
	const readers = 4
	got := make([][]*typemodel.Type, readers)
	var wg sync.WaitGroup
	for r := range readers {
		got[r] = make([]*typemodel.Type, len(offs))
		wg.Go(func() {
			// Each reader walks the list from its own place, so that the
			// readers meet on misses and on hits alike.
			for k := range offs {
				i := (k + r*len(offs)/readers) % len(offs)
				n, err := g.At(dwarf.Offset(offs[i]))
				if err != nil {
					t.Errorf("At(%#x): %v", offs[i], err)
					return
				}
				got[r][i] = n
			}
		})
	}
	wg.Wait()
	for i, off := range offs {
		want, err := g.At(dwarf.Offset(off))
		if err != nil {
			t.Fatal(err)
		}
		for r := range readers {
			if got[r][i] != want {
				t.Fatalf("reader %d: At(%#x) gave another node than the graph holds", r, off)
			}
		}
	}
	assertDecodedOnce(t, g)
}

// BenchmarkFilledGraphStructs looks up every struct of libc's filled graph
// from parallel goroutines (extract --all's ODR comparisons and struct
// rows), through At (the lock shared on a hit) and, as the yardstick in
// the same run, through the lock taken exclusively as At took it before.
func BenchmarkFilledGraphStructs(b *testing.B) {
	d := openDebugT(b, libcDebug)
	offs := structOffsets(b, d)
	g, err := d.AllTypes(context.Background(), 2)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		at   func(uint64) (*typemodel.Type, error)
	}{
		{"shared", func(off uint64) (*typemodel.Type, error) { return g.At(dwarf.Offset(off)) }},
		{"exclusive", func(off uint64) (*typemodel.Type, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			return g.at(off)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := c.at(offs[i%len(offs)]); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}
