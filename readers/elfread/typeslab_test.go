package elfread

import "testing"

// TestPendingPoolReuse: a unit given back free has its slab and arena
// reused by the next unit; one given back held (a node links at join) is
// never handed out again; copies never overlap. Planted: a give(true) in
// place of give(false) fails the held check. Cost: microseconds.
func TestPendingPoolReuse(t *testing.T) {
	sc := &scanner{recycle: true}
	a := sc.newPending()
	fa := sc.pfields([]pfield{{loc: 1}, {loc: 2}})
	fb := sc.pfields([]pfield{{loc: 3}})
	if &fa[len(fa)-1] == &fb[0] || cap(fa) != len(fa) || fb[0].loc != 3 || fa[1].loc != 2 {
		t.Fatalf("member copies overlap or carry slack: %v %v", fa, fb)
	}
	sc.give(true)
	if b := sc.newPending(); b != a {
		t.Errorf("a unit given back free: its slab was not reused")
	}
	if fc := sc.pfields([]pfield{{loc: 9}}); &fc[0] != &fa[0] {
		t.Errorf("a unit given back free: its member arena was not reused")
	}
	held := sc.newPending()
	heldF := sc.pfields([]pfield{{loc: 7}})
	sc.give(false)
	for range 2 * pendingSlab {
		if sc.newPending() == held {
			t.Fatal("a slab whose nodes outlive their unit was handed out again")
		}
	}
	for range 2 * pfieldArena {
		if f := sc.pfields([]pfield{{loc: 1}}); &f[0] == &heldF[0] {
			t.Fatal("an arena whose members outlive their unit was handed out again")
		}
	}
	if heldF[0].loc != 7 {
		t.Fatalf("a held member was overwritten: %v", heldF)
	}
	// A scanner that does not recycle (At's) lists nothing.
	plain := &scanner{}
	plain.newPending()
	plain.pfields([]pfield{{loc: 1}})
	if len(plain.pool.used) != 0 || len(plain.pool.arenas) != 0 {
		t.Error("a scanner that does not recycle keeps its slabs listed (they would outlive their nodes' use)")
	}
}
