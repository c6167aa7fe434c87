package elfread

import (
	"reflect"
	"slices"
	"testing"
)

// TestLendAbbrevs: a scanner lent another's unit table reads it as its
// own, and when it goes on to a unit with another table it parses that
// into lists of its own: the lender's table is what it parsed, entry for
// entry (the plant, a lent slot parsed into in place, overwrites it).
func TestLendAbbrevs(t *testing.T) {
	d := mustOpenDebug(t, compressedObject(t, "zlib"))
	u0, ok, err := d.unit(0)
	if err != nil || !ok {
		t.Fatalf("unit 0: %v", err)
	}
	var u1 *unit
	for i := 1; ; i++ {
		u, ok, err := d.unit(i)
		if err != nil || !ok {
			t.Fatalf("no unit with a table of its own after unit 0 (%v)", err)
		}
		if u.abbrevOff != u0.abbrevOff {
			u1 = u
			break
		}
	}
	lender := &scanner{d: d}
	if err := lender.enterUnit(u0); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(lender.slots[0].tab)
	wantAttrs := slices.Clone(lender.slots[0].attrs)
	ws := &scanner{d: d}
	ws.lendAbbrevs(lender)
	if err := ws.enterUnit(u0); err != nil {
		t.Fatal(err)
	}
	if &ws.tab[0] != &lender.slots[0].tab[0] {
		t.Fatal("the lent table was parsed again")
	}
	if err := ws.enterUnit(u1); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lender.slots[0].attrs, wantAttrs) || len(lender.slots[0].tab) != len(want) {
		t.Fatal("the lender's table changed when the borrower parsed another unit's")
	}
	for i := range want {
		if lender.slots[0].tab[i].tag != want[i].tag || lender.slots[0].tab[i].children != want[i].children || len(lender.slots[0].tab[i].attrs) != len(want[i].attrs) {
			t.Fatalf("the lender's abbreviation %d changed when the borrower parsed another unit's table", i)
		}
	}
}
