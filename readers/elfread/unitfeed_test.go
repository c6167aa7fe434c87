package elfread

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestFeedUnitsOverlapsInflation: ScanAll of a zlib-compressed
// .debug_info hands the first unit over having inflated a fraction of the
// section (the workers scan while the rest inflates), gives the same index
// for every -j (run under -race: the workers read only what was inflated
// before they got their unit), and a stream damaged at its end fails
// ScanAll with the one-line decompression error, whatever the workers
// read before; -j 2^40 starts no more workers than units. Cost: one gcc
// build of 17 small units (about 2 s).
func TestFeedUnitsOverlapsInflation(t *testing.T) {
	lib := compressedObject(t, "zlib")
	var want *Index
	for _, jobs := range []int{1, 2, 4} {
		d := mustOpenDebug(t, lib)
		if d.infoZ == nil {
			t.Fatal(".debug_info is not read as a stream")
		}
		first := -1
		slots, _, err := feedUnits(context.Background(), d, jobs, func(*unit) bool {
			if first < 0 {
				first = d.infoZ.Avail()
			}
			return true
		}, func() func(scanItem, *unitTypes) {
			return func(it scanItem, r *unitTypes) { *r = (&scanner{d: it.p}).unitTypes(it.u) }
		})
		if err != nil {
			t.Fatal(err)
		}
		if first*4 > len(d.info) || len(slots) < 2 {
			t.Errorf("-j %d: the first of %d units was handed over after inflating %d of %d bytes; want at most a quarter", jobs, len(slots), first, len(d.info))
		}
		idx, err := mustOpenDebug(t, lib).ScanAll(context.Background(), jobs)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = idx
		} else if !reflect.DeepEqual(idx, want) {
			t.Errorf("-j %d: the index differs from -j 1's", jobs)
		}
	}
	// -j is the user's number: no more workers, and nothing sized by it,
	// than the units.
	if idx, err := mustOpenDebug(t, lib).ScanAll(context.Background(), 1<<40); err != nil || !reflect.DeepEqual(idx, want) {
		t.Errorf("-j 2^40: %v, or an index unlike -j 1's", err)
	}
	bad := corruptDebugInfoTail(t, lib)
	_, err := mustOpenDebug(t, bad).ScanAll(context.Background(), 2)
	if err == nil || !strings.Contains(err.Error(), "cannot decompress") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("ScanAll into the damage: %v; want one line naming the decompression", err)
	}
}
