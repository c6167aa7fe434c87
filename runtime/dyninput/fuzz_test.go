package dyninput

import "testing"

// FuzzTable: any bytes either fail View with an error or give a table whose
// every query answers (a value or an error) for any rank, rank count and
// element size, never a panic or a read past the table; what
// SetRecvSizeBytes records is what RecvSizeBytes reads back. The seed corpus
// is testdata/fuzz/FuzzTable.
func FuzzTable(f *testing.F) {
	good, _ := Encode([]uint64{3, 5, 7}, []uint64{0, 3, 8}, []uint64{10, 20, 30})
	f.Add(good, 1, 3, uint64(4), uint64(6))
	f.Fuzz(func(t *testing.T, mem []byte, r, rankN int, dts, recv uint64) {
		tb, err := View(mem)
		if err != nil {
			return
		}
		if tb.RankN() < 1 || tb.RankN() > MaxRanks || Size(tb.RankN()) > len(mem) {
			t.Fatalf("View accepted %d bytes for %d ranks", len(mem), tb.RankN())
		}
		_, _ = tb.SendCountSizeBytes(r, dts)
		_, _ = tb.SendOffsetBytes(dts, r, rankN)
		_, _ = tb.RecvPostOffsetBytes(dts, r, rankN)
		if err := tb.SetRecvSizeBytes(recv, dts, r, rankN); err == nil {
			got, err := tb.RecvSizeBytes(r)
			if err != nil || got != recv*dts {
				t.Fatalf("recorded %d × %d, read back %d, %v", recv, dts, got, err)
			}
		}
	})
}
