package tcp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// extended makes w a world of the extended framing, ranks and roots.
func extended(w *scaleWorld) *scaleWorld {
	cfg, rootCfg := w.cfg, w.rootCfg
	w.cfg = func(rank int, c *Config) {
		c.Extended = true
		if cfg != nil {
			cfg(rank, c)
		}
	}
	w.rootCfg = func(i int, c *Config) {
		c.Extended = true
		if rootCfg != nil {
			rootCfg(i, c)
		}
	}
	return w
}

// Several roots in the extended framing agree with one: flat and
// hierarchical, both ring modes, COMPLETE only once every range is done
// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring).
func TestExtendedMultiRootWorlds(t *testing.T) {
	for _, c := range []struct{ n, r, l int }{{8, 2, 0}, {9, 4, 0}, {20, 3, 4}, {16, 16, 0}} {
		for _, bidir := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d roots=%d l=%d bidir=%v", c.n, c.r, c.l, bidir), func(t *testing.T) {
				runWorld(t, extended(&scaleWorld{n: c.n, r: c.r, l: c.l, bidir: bidir})).agreed(t)
			})
		}
	}
}

// completeBefore runs an extended world of 8 ranks and 2 roots, bootstrap
// only, whose rank 6 (root 1's range) sleeps hold before the last step of
// its gather — so it sends RING_DONE at least hold after the others, and
// root 0's ranks are through their own gathers long before — and returns
// the ranks that had their COMPLETE before rank 6's sleep was over. early
// plants root 0's fault: COMPLETE on its own range's RING_DONE.
func completeBefore(t *testing.T, early bool) []int {
	const n, slow, hold = 8, 6, 400 * time.Millisecond
	var mu sync.Mutex
	var woke time.Time
	slept := false
	w := extended(&scaleWorld{n: n, r: 2, bootOnly: true, cfg: func(rank int, c *Config) {
		if rank != slow {
			return
		}
		c.Hooks = &Hooks{RingStep: func(_ uint32, step int, _ netip.AddrPort) bool {
			mu.Lock()
			defer mu.Unlock()
			if step == n-2 && !slept {
				slept = true
				time.Sleep(hold)
				woke = time.Now()
			}
			return false
		}}
	}, rootCfg: func(i int, c *Config) { c.plantCompleteEarly = early && i == 0 }})
	runWorld(t, w)
	for r, err := range w.errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if !slept {
		t.Fatalf("rank %d never reached step %d: the check checked nothing", slow, n-2)
	}
	var before []int
	for r, end := range w.ended {
		if end.Before(woke) {
			before = append(before, r)
		}
	}
	return before
}

// COMPLETE is the world's: no rank of root 0's range has it before the
// slow rank of root 1's range is through its gather. The planted fault
// (root 0 sends COMPLETE on its own range's RING_DONE) is caught: its
// ranks return while rank 6 still sleeps. Cost: two worlds of 8, 0.5 s each.
func TestCompleteWaitsForEveryRange(t *testing.T) {
	if early := completeBefore(t, false); len(early) > 0 {
		t.Fatalf("ranks %v had COMPLETE before root 1's range was done", early)
	}
	early := completeBefore(t, true)
	if len(early) == 0 {
		t.Fatal("the planted root 0 that sends COMPLETE on its own range's RING_DONE was not caught: every rank returned after rank 6's gather")
	}
	for _, r := range early {
		if r >= 4 {
			t.Fatalf("rank %d of root 1's range had COMPLETE before rank 6 was done: %v", r, early)
		}
	}
	t.Logf("planted root 0: ranks %v had COMPLETE before root 1's range was done", early)
}

// A forged or out-of-order record of the roots' ring is refused naming
// the root it came from, the origin and the field. Root 1 of 3 on 12
// ranks (root 0 serves 0..3, root 2 8..11).
func TestRootRecordRefused(t *testing.T) {
	const from = "previous root 0 (127.0.0.1:1) (peer 127.0.0.1:2)"
	bad := func(b []byte, at int, v uint32) []byte {
		c := slices.Clone(b)
		binary.LittleEndian.PutUint32(c[at:], v)
		return c
	}
	ok := abortRecord(2, 9, abi.BootstrapRootAbortReport, "peer x rank 9 reports: rank 8 went")
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"bad magic", bad(doneRecord(0, 3, 4), 0, 0x61796c69), "magic 0x61796c69"},
		{"short", []byte{1, 2}, "2-byte record"},
		{"own done back", doneRecord(1, 3, 4), "root 1's own record back"},
		{"done of a root no world has", doneRecord(5, 3, 4), "field index is 5"},
		{"done nroots", doneRecord(0, 4, 4), "field nroots is 4"},
		{"done count", doneRecord(2, 3, 3), "field count 3, the rule gives root 2 ranks 8..11"},
		{"abort rank of another range", bad(ok, 8, 2), "field rank 2, not one of root 2's ranks 8..11"},
		{"abort kind", bad(ok, 12, 7), "field kind 7"},
		{"abort text_len", bad(ok, 16, 3), "field text_len 3"},
		{"abort own", abortRecord(1, 5, abi.BootstrapRootAbortHungUp, "x"), "root 1's own record back"},
		{"hang-up of no rank", abortRecord(0, -1, abi.BootstrapRootAbortHungUp, "x"), "kind hung up with field rank -1"},
		{"a size of neither", append(doneRecord(0, 3, 4), 0), "17-byte record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseRootRec(c.b, from, 1, 3, 12, 0, true)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "previous root 0 (127.0.0.1:1)") {
				t.Fatalf("got %v, want a refusal naming %q and the root", err, c.want)
			}
		})
	}
	for _, b := range [][]byte{ok, doneRecord(0, 3, 4), abortRecord(0, -1, abi.BootstrapRootAbortReport, "")} {
		if _, err := parseRootRec(b, from, 1, 3, 12, 0, true); err != nil {
			t.Fatalf("an honest record refused: %v", err)
		}
	}
}

// FuzzRootRingRecord holds parseRootRec to its rule on any bytes: it
// never panics, and a record it takes is one an honest root of that world
// could have sent — built again from its fields, the same bytes.
func FuzzRootRingRecord(f *testing.F) {
	f.Add(doneRecord(0, 3, 4), uint8(1), uint8(3), uint16(12), uint8(0))
	f.Add(abortRecord(2, 9, abi.BootstrapRootAbortReport, "rank 8 went"), uint8(1), uint8(3), uint16(12), uint8(0))
	f.Add(abortRecord(0, 1, abi.BootstrapRootAbortHungUp, "peer a rank 1"), uint8(1), uint8(2), uint16(16), uint8(4))
	f.Fuzz(func(t *testing.T, b []byte, self, nroots uint8, n uint16, l uint8) {
		w := fuzzWorld(int(nroots), int(n), int(l))
		i := int(self) % w.r
		rec, err := parseRootRec(b, "root", i, w.r, w.n, w.l, true)
		if err != nil {
			if !strings.Contains(err.Error(), "root") {
				t.Fatalf("a refusal names no root: %v", err)
			}
			return
		}
		if rec.origin == i || rec.origin < 0 || rec.origin >= w.r {
			t.Fatalf("took a record of origin %d at root %d of %d", rec.origin, i, w.r)
		}
		lo, hi := RootRange(rec.origin, w.r, w.n, w.l, true)
		var again []byte
		if rec.done {
			again = doneRecord(rec.origin, w.r, hi-lo)
		} else {
			if rec.rank != -1 && (rec.rank < lo || rec.rank >= hi) {
				t.Fatalf("took rank %d from root %d (ranks %d..%d)", rec.rank, rec.origin, lo, hi-1)
			}
			again = abortRecord(rec.origin, rec.rank, rec.kind, string(b[abi.SizeofBootstrapRootAbort:]))
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("took % x, an honest root sends % x", b, again)
		}
	})
}

// fuzzWorld is a world of at least two roots from any numbers.
func fuzzWorld(nroots, n, l int) (w struct{ r, n, l int }) {
	w.n = 2 + n%200
	if l%3 != 0 {
		w.l = 1 + l%8
	}
	u := units(w.n, unitSize(true, w.n, w.l))
	if u < 2 {
		w.n, w.l, u = 2, 0, 2
	}
	w.r = 2 + nroots%(u-1)
	return w
}
