package elfread

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// scanBuild is one unit's share of ScanAllTypes: its scan for the index
// and its graph.
type scanBuild struct {
	scan unitTypes
	ug   *unitGraph
	err  error // the build's
}

// ScanAllTypes is ScanAll and then AllTypes in one pass over the units
// (docs/layoutcheck.md#one-pass-over-the-units): the worker that takes a
// unit builds its graph and indexes it at once, while the lister inflates
// the units after it, instead of every unit's graph waiting for the whole
// section and the whole index. A C unit is indexed by the walk that
// decodes its types (walkindex.go), any other scanned for the index after
// its build, as ScanAll scans it. The index and the graph are those
// ScanAll and AllTypes make, for every jobs. A DWARF with type units,
// whose signatures a unit's graph follows into units that may not be
// inflated yet (or a unit naming one's type), has its graph built after
// the scan, as AllTypes builds it.
func (d *Debug) ScanAllTypes(ctx context.Context, jobs int) (*Index, *Types, error) {
	if jobs < 1 {
		return nil, nil, fmt.Errorf("-j %d: the number of workers is at least 1", jobs)
	}
	g := d.Types()
	g.allMu.Lock()
	defer g.allMu.Unlock()
	if g.isFilled() {
		idx, err := d.ScanAll(ctx, jobs)
		return idx, g, err
	}
	idx := d.newIndex()
	// A type unit listed: the graph is built after the scan (its builds
	// here would be dropped), and the workers only scan from then on.
	var typeUnits atomic.Bool
	keep := func(u *unit) bool {
		if u.typeUnit {
			typeUnits.Store(true)
		}
		return idx.count(u)
	}
	slots, items, err := feedUnits(ctx, d, jobs, keep, func() func(scanItem, *scanBuild) {
		var sc *scanner
		var wk *typeWorker
		return func(it scanItem, r *scanBuild) {
			if err := ctx.Err(); err != nil {
				r.scan.err = err
				return
			}
			if !typeUnits.Load() {
				if wk == nil {
					wk = newTypeWorker()
				}
				var ix walkIndex
				r.ug, r.err = wk.buildUnit(it, g.void, true, &ix)
				if ix.ok && r.err == nil && r.ug.err == nil {
					walkIndexed.Add(1)
					r.scan = ix.out
					return
				}
			}
			// The unit's own scan: a unit the walk does not index
			// (walkindex.go), or one whose walk failed, which the scan
			// reports first and in its words, as ScanAll would. Its
			// abbreviations are those the walk parsed.
			if sc != nil && wk != nil && wk.sc != nil && sc.d == wk.sc.d {
				sc.lendAbbrevs(wk.sc)
			}
			sc = scanUnitTypes(ctx, sc, it, &r.scan)
			if sc != nil {
				sc.unlend()
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	scans := make([]*unitTypes, len(slots))
	for i, r := range slots {
		scans[i] = &r.scan
	}
	// A unit naming a type unit's type gets the graph built after the
	// scan too. Otherwise the declarations' table is made from the units'
	// scans, beside their merge (which only reads them).
	later := namesTypeUnits(scans)
	var defs chan map[declKey]declDefs
	if !later && g.defs == nil {
		defs = make(chan map[declKey]declDefs, 1)
		go func() { defs <- defsOfUnits(scans) }()
	}
	out, err := d.indexOf(idx, items, scans, nil)
	if err != nil {
		return nil, nil, err
	}
	res := make([]*unitGraph, len(slots))
	var buildErr error
	later = later || out.TypeUnits > 0
	for i, r := range slots {
		res[i] = r.ug
		if r.err != nil && buildErr == nil {
			buildErr = r.err
		}
		later = later || errors.Is(r.err, errSigsLater) || r.ug != nil && errors.Is(r.ug.err, errSigsLater)
	}
	if later || buildAfterScan {
		// Every unit is inflated now: AllTypes' own pass, whose builds
		// follow signatures (the graphs built here are dropped, and with
		// them the nodes the walks gave the index: Index.Node finds none).
		if err := d.allTypes(ctx, jobs); err != nil {
			return nil, nil, err
		}
		if plantStaleNodes {
			out.graph = g
		}
		return out, g, nil
	}
	if err := g.finish(ctx, jobs, items, res, buildErr, defs); err != nil {
		return nil, nil, err
	}
	// The walks' nodes are this graph's (Index.Node).
	out.graph = g
	return out, g, nil
}

// walkIndexed counts the units the walk indexed (the tests: which path
// ran).
var walkIndexed atomic.Int64

// buildAfterScan turns the one pass off (the tests: the graph is the same
// without it): ScanAllTypes drops the graphs it built beside the scan and
// builds them again after it, as for type units.
var buildAfterScan bool

// plantStaleNodes is for the tests only: after a rebuild the index keeps
// the dropped graphs' nodes for Index.Node.
var plantStaleNodes bool
