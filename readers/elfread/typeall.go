package elfread

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// AllTypes fills the type graph with every type DIE at namespace scope of
// every unit of the DWARF and its parts, decoding the units on jobs
// workers (each DIE once: a worker decodes its units' DIEs into nodes, and
// one link step joins them, decoding what they reach that no unit walk
// met: types nested in a class or local to a function). The graph is the
// same for every jobs. Type units are left out, as ScanAll leaves them.
func (d *Debug) AllTypes(ctx context.Context, jobs int) (*Types, error) {
	if jobs < 1 {
		return nil, fmt.Errorf("-j %d: the number of workers is at least 1", jobs)
	}
	g := d.Types()
	var items []scanItem
	for _, p := range d.all() {
		if err := p.ensure(p.infoZ, len(p.info)); err != nil {
			return nil, err
		}
		if err := p.ensure(p.abbrevZ, len(p.abbrev)); err != nil {
			return nil, err
		}
		for i := 0; ; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			u, ok, err := p.unit(i)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if !u.typeUnit {
				items = append(items, scanItem{p, u})
			}
		}
	}
	type result struct {
		nodes   []*pending
		decodes map[uint64]int
		err     error
	}
	res := make([]result, len(items))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(jobs, max(len(items), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				if err := ctx.Err(); err != nil {
					res[i].err = err
					continue
				}
				it := items[i]
				r := &res[i]
				count := func(uint64) {}
				if countDecodes {
					r.decodes = map[uint64]int{}
					count = func(off uint64) { r.decodes[off]++ }
				}
				err := Guard(func() error {
					var err error
					r.nodes, err = unitNodes(it.p, it.u, count)
					return err
				})
				if err != nil {
					r.err = err
				}
			}
		}()
	}
	wg.Wait()
	lists := make([][]*pending, 0, len(items))
	for i := range res {
		if err := res[i].err; err != nil {
			if _, ok := err.(*InputError); ok || err == context.Canceled || err == context.DeadlineExceeded {
				return nil, err
			}
			return nil, InputErrorf(items[i].p.Path(), "corrupted DWARF: %v", err)
		}
		lists = append(lists, res[i].nodes)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range res {
		for off, n := range res[i].decodes {
			g.decodes[off] += n
		}
	}
	// Units already read through At are not decoded twice: their nodes
	// are in the graph (only a caller mixing At and AllTypes meets this).
	for i, list := range lists {
		kept := list[:0]
		for _, pd := range list {
			if _, ok := g.nodes[pd.t.Offset]; !ok {
				kept = append(kept, pd)
			} else if g.decodes != nil {
				g.decodes[pd.t.Offset]-- // read again by the walk, not decoded into the graph
			}
		}
		lists[i] = kept
	}
	if err := g.link(nil, lists); err != nil {
		return nil, err
	}
	return g, nil
}

// unitNodes decodes every type DIE of one unit at namespace scope (and in
// namespaces), skipping every other subtree.
func unitNodes(p *Debug, u *unit, count func(uint64)) ([]*pending, error) {
	sc := &scanner{d: p}
	if err := sc.enterUnit(u); err != nil {
		return nil, err
	}
	if !sc.cuChildren {
		return nil, nil
	}
	scoped := !cLanguage(sc.lang)
	var out []*pending
	stack := []string{""}
	base := uint64(p.base)
	for sc.c.Left() > 0 && len(stack) > 0 && sc.failed() == nil {
		at := sc.c.Off()
		code := sc.c.Uleb()
		if code == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		a := sc.abbrevAt(code)
		if a == nil {
			break
		}
		if _, ok := typeKind(a.tag); ok {
			sc.c.Seek(at)
			qual := ""
			if scoped {
				qual = stack[len(stack)-1]
			}
			pd, err := sc.decodeType(base+uint64(at), qual, count)
			if err != nil {
				return nil, err
			}
			out = append(out, pd)
			continue
		}
		if a.tag == tagNamespace {
			di := sc.decode(a)
			if !di.children {
				continue
			}
			if len(stack) >= maxScopeDepth {
				sc.c.Fail("DIEs nest more than %d deep", maxScopeDepth)
				break
			}
			q := stack[len(stack)-1]
			if !di.export && string(di.name) != "__cxx11" {
				q = qualify(q, string(di.name))
			}
			stack = append(stack, q)
			continue
		}
		if sc.passOver(a, u.end) {
			sc.skipChildren()
		}
	}
	return out, sc.failed()
}
