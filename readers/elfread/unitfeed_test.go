package elfread

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// TestFeedUnitsListerScans: with a queue of one unit the lister scans most
// units itself while the jobs-1 workers scan the others; the index is -j
// 1's at every -j (under -race), and the lister made its own work function
// beside the workers', jobs in all.
func TestFeedUnitsListerScans(t *testing.T) {
	lib := compressedObject(t, "zlib")
	want, err := mustOpenDebug(t, lib).ScanAll(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	saved := feedAhead
	feedAhead = 1
	defer func() { feedAhead = saved }()
	for _, jobs := range []int{2, 3} {
		idx, err := mustOpenDebug(t, lib).ScanAll(context.Background(), jobs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(idx, want) {
			t.Errorf("-j %d with the lister scanning: the index differs from -j 1's", jobs)
		}
		// The lister is this goroutine: a work function made on it has this
		// test's own frame on its stack, a worker's only the closure's. The
		// workers hold their first unit until the lister has scanned one,
		// so that the queue is full when the lister next hands one over,
		// however the machine schedules them (a loaded machine's workers
		// kept up with a slow lister, which then scanned nothing); a feed
		// whose lister never scans (the feed of before: jobs workers, a
		// lister that only lists) holds them for the bound, then fails.
		var made, onLister atomic.Int64
		var gaveUp atomic.Bool
		scanned := make(chan struct{})
		var once sync.Once
		d := mustOpenDebug(t, lib)
		slots, _, err := feedUnits(context.Background(), d, jobs, func(*unit) bool { return true }, func() func(scanItem, *unitTypes) {
			made.Add(1)
			buf := make([]byte, 64<<10)
			lister := strings.Contains(string(buf[:runtime.Stack(buf, false)]), "TestFeedUnitsListerScans(")
			if lister {
				onLister.Add(1)
			}
			return func(it scanItem, r *unitTypes) {
				if lister {
					once.Do(func() { close(scanned) })
				} else if !gaveUp.Load() {
					select {
					case <-scanned:
					case <-time.After(5 * time.Second):
						gaveUp.Store(true)
					}
				}
				*r = (&scanner{d: it.p}).unitTypes(it.u)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, lister := made.Load(), onLister.Load(); got != int64(jobs) || lister != 1 {
			t.Errorf("-j %d over %d units: %d work functions made, %d of them by the lister; want %d, one by the lister (jobs-1 workers and the lister)", jobs, len(slots), got, lister, jobs)
		}
	}
}
