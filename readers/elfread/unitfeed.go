package elfread

import (
	"context"
	"sync"
)

// feedAhead is how many listed units may wait for a worker: the lister
// inflates no further ahead of the workers than that (a variable for the
// tests, which make the queue short to have the lister scan).
var feedAhead = 64

// feedJob is one unit handed to a worker, with its result slot.
type feedJob[R any] struct {
	it scanItem
	r  *R
}

// feedUnits lists the units of every part of d on the calling goroutine
// and hands each one keep accepts, as soon as its bytes are there and
// with a result slot of its own, to one of jobs-1 workers, or scans it
// itself when they are all behind (and at the end, what is queued still),
// so that jobs goroutines share the work, the lister one of them: a compressed
// .debug_info is one zlib stream, inflated serially, so the lister
// inflates unit after unit while the workers scan the units already
// inflated, instead of the whole section first
// (docs/layoutcheck.md#the-parallel-scan). keep runs on the lister, in
// unit order; each worker makes its own work function (newWorker: its
// scanner and other state, for no more workers than units) and runs
// work(it, r) on its units; work reads only bytes of its
// unit (inflated before the unit was handed over) and the sections read
// whole (a compressed .debug_abbrev is inflated whole first, since every
// unit's table may be anywhere in it). The slots come back in unit order.
// With jobs 1 the lister scans each unit itself, as it lists it: -j 1
// runs on one goroutine. An error listing or inflating the units is
// returned once the workers stopped, and wins over the workers' errors:
// it is what a whole inflation first reported before any unit was
// scanned.
func feedUnits[R any](ctx context.Context, d *Debug, jobs int, keep func(*unit) bool, newWorker func() func(it scanItem, r *R)) ([]*R, []scanItem, error) {
	parts := d.all()
	for _, p := range parts {
		if err := p.ensure(p.abbrevZ, len(p.abbrev)); err != nil {
			return nil, nil, err
		}
	}
	ch := make(chan feedJob[R], feedAhead)
	var wg sync.WaitGroup
	// Workers start with the units they are given, so that there are no
	// more of them than units (-j is the user's number).
	started := 0
	start := func() {
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWorker()
			for j := range ch {
				work(j.it, j.r)
			}
		}()
	}
	// scanHere scans a unit on the lister, with a work function of its
	// own made on first need.
	var inline func(scanItem, *R)
	scanHere := func(it scanItem, r *R) {
		if inline == nil {
			inline = newWorker()
		}
		inline(it, r)
	}
	var out []*R
	var items []scanItem
	err := func() error {
		defer close(ch)
		for _, p := range parts {
			for i := 0; ; i++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				u, ok, err := p.unit(i)
				if err != nil {
					return err
				}
				if !ok {
					break
				}
				if !keep(u) {
					continue
				}
				it := scanItem{p: p, u: u, index: len(items)}
				r := new(R)
				out, items = append(out, r), append(items, it)
				if jobs <= 1 {
					// -j 1 is one goroutine: it scans each unit as soon as
					// it is inflated, and inflates the next after.
					scanHere(it, r)
					continue
				}
				// The lister is one of the jobs workers: jobs-1 goroutines
				// take the units it hands over, and when they are behind
				// (the queue full) it scans the unit itself instead of
				// waiting, so that jobs goroutines are busy, not jobs+1
				// sharing jobs cores with the inflation, the part nothing
				// else can do, getting a share.
				if started < jobs-1 {
					start()
				}
				select {
				case ch <- feedJob[R]{it, r}:
				default:
					scanHere(it, r)
				}
			}
			// The section is read to its end: a stream that goes on past
			// its declared size is refused here, as a whole inflation
			// refuses it.
			if err := p.ensure(p.infoZ, len(p.info)); err != nil {
				return err
			}
		}
		return nil
	}()
	if err == nil {
		// The lister takes its share of what is still queued.
		for j := range ch {
			scanHere(j.it, j.r)
		}
	}
	wg.Wait()
	if err != nil {
		return nil, nil, err
	}
	return out, items, nil
}
