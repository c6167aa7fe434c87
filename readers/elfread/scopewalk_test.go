package elfread

import (
	"math/rand/v2"
	"testing"
)

// scopeMismatches compares, for every named DIE of the first units of d
// (at most maxUnits), the scope a lookup's prefix walk gives (newUctx,
// asked in a shuffled order and then in DIE order) with the scope one
// whole walk of the unit records. It returns the mismatches and how many
// DIEs were compared, and reports whether asking for the unit's first
// named DIE alone walked less than the whole of some unit.
func scopeMismatches(t *testing.T, d *Debug, maxUnits int) (bad, compared int, partial bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < maxUnits; i++ {
		u, ok, err := d.unit(i)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		whole := map[int]string{}
		var order []int
		end := walkNamedScopes(&scanner{d: d}, u, u.end, func(at int, s specScope) {
			whole[at] = s.qual
			order = append(order, at)
		})
		if end != u.end {
			t.Fatalf("unit %#x: the whole walk ended at %#x, not at the unit's end %#x", u.off, end, u.end)
		}
		if len(order) == 0 {
			continue
		}
		first, err := newUctx(d, u)
		if err != nil {
			t.Fatal(err)
		}
		if got := first.scopeOf(order[0]); got != whole[order[0]] {
			bad++
		}
		if first.scopesTo < u.end {
			partial = true
		}
		for _, asked := range [][]int{shuffled(rng, order), order} {
			x, err := newUctx(d, u)
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range asked {
				compared++
				if got := x.scopeOf(at); got != whole[at] {
					if bad < 5 {
						t.Logf("unit %#x DIE %#x: prefix walk gives scope %q, the whole walk %q", u.off, at, got, whole[at])
					}
					bad++
				}
			}
		}
	}
	return bad, compared, partial
}

func shuffled(rng *rand.Rand, in []int) []int {
	out := append([]int(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestScopeWalkPrefix: a lookup walks a C++ unit's scopes only as far as
// the DIEs it decodes, and every named DIE gets the scope one whole walk
// gives it, whatever order they are asked in (our C++ fixture, and
// libstdc++'s debug file when it is installed).
func TestScopeWalkPrefix(t *testing.T) {
	for _, in := range []struct {
		name, path string
		units      int
		real       bool
	}{{"fixture", "", 1 << 20, false}, {"libstdc++", libstdcxxDebug, 60, true}} {
		t.Run(in.name, func(t *testing.T) {
			path := in.path
			if !in.real {
				path = cxxObject(t)
			}
			d := openDebugT(t, path)
			bad, compared, partial := scopeMismatches(t, d, in.units)
			if compared == 0 {
				t.Fatal("no named DIE compared: the test checked nothing")
			}
			if bad > 0 {
				t.Errorf("%d of %d scopes differ from the whole walk's", bad, compared)
			}
			if in.real && !partial {
				t.Errorf("asking for a unit's first named DIE walked the whole of every unit: the walk is not a prefix")
			}
			t.Logf("%d scopes compared", compared)
		})
	}
}

// TestScopeWalkPrefixPlanted: a prefix walk that stops before the DIE
// asked for gives it no scope, and the comparison catches it.
func TestScopeWalkPrefixPlanted(t *testing.T) {
	plantScopeStopShort = true
	defer func() { plantScopeStopShort = false }()
	d := openDebugT(t, cxxObject(t))
	bad, compared, _ := scopeMismatches(t, d, 1<<20)
	if compared == 0 || bad == 0 {
		t.Fatalf("the planted short walk went unseen (%d of %d differ)", bad, compared)
	}
}

// TestFoundTableLent: the decode of a struct a lookup found reads the
// abbreviation table the lookup parsed (lent, not parsed again), and a
// table of another unit's shape is never lent.
func TestFoundTableLent(t *testing.T) {
	d := openDebugT(t, cxxObject(t))
	found, err := d.FindStructs([][]string{{"app::holder"}})
	if err != nil || found[0] == nil {
		t.Fatalf("%v %v", found, err)
	}
	sl := d.foundTable.Load()
	if sl == nil || !sl.valid || !sl.lent {
		t.Fatalf("the lookup left no table to lend: %+v", sl)
	}
	u, err := d.unitContaining(int(found[0].Offset))
	if err != nil {
		t.Fatal(err)
	}
	x, err := newUctx(d, u)
	if err != nil {
		t.Fatal(err)
	}
	if !x.sc.slots[0].lent || &x.sc.tab[0] != &sl.tab[0] {
		t.Errorf("the unit's context parsed its table again instead of reading the lookup's")
	}
	other := *sl
	other.key.off++
	d.foundTable.Store(&other)
	y, err := newUctx(d, u)
	if err != nil {
		t.Fatal(err)
	}
	if y.sc.slots[0].lent {
		t.Errorf("a table of another abbreviation offset was lent")
	}
	// The layout is the same whichever table the decode read.
	a, err := d.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	d2 := openDebugT(t, d.File.Path)
	b, err := d2.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Fields) != len(b.Fields) || a.Size != b.Size {
		t.Errorf("layouts differ: %d fields %d bytes against %d fields %d bytes", len(a.Fields), a.Size, len(b.Fields), b.Size)
	}
}
