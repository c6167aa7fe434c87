package elfread

import (
	"fmt"
	"testing"
)

// TestStr2ByPlace: once a scanner's table by place is made, a name is
// found again by where its bytes are, and a name that starts at the same
// place but is shorter or longer (a prefix of the same bytes) is its own
// string, never the one the table holds; equal bytes elsewhere give an
// equal string.
func TestStr2ByPlace(t *testing.T) {
	sc := &scanner{}
	for i := range nameCacheAfter {
		sc.str2(fmt.Appendf(nil, "warm%d", i))
	}
	if sc.byPlace == nil {
		t.Fatalf("no table by place after %d names", nameCacheAfter)
	}
	buf := []byte("abcdefghijklmnopq")
	for round := range 3 {
		for _, n := range []int{placeMin, placeMin + 2, 16, 3, placeMin + 1} {
			if got, want := sc.str2(buf[:n]), string(buf[:n]); got != want {
				t.Fatalf("round %d: str2 of the first %d bytes is %q, want %q", round, n, got, want)
			}
		}
	}
	other := []byte("abcdefghij")
	if got := sc.str2(other); got != "abcdefghij" {
		t.Fatalf("equal bytes elsewhere: %q", got)
	}
	if sc.str2(buf[:placeMin+2]) != sc.str2(other) {
		t.Fatal("equal names are not equal strings")
	}
}
