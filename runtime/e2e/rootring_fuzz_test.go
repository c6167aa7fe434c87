package e2e

import (
	"bufio"
	"encoding/binary"
	"io"
	"net/netip"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// The reference libnccom's checks of what another root sends on the roots'
// ring (nccom_root_ring_take_range, nccom_root_ring_finish:
// runtime/libnccom/root_ring.c) run in a C process (rootringcheck.c, with
// ASan/UBSan when the compiler has them), held by a fuzz target to the
// rule the Go roots keep (runtime/transport/tcp rootring.go,
// docs/bootstrap-hierarchy.md#multi-root-the-roots-ring).
var rootRingDriver = &cDriver{name: "rootringcheck", libnccom: []string{"root_ring.c", "roots.c", "hier.c", "frame.c", "socket.c", "log.c"},
	env: []string{"NRTABI_LOG_LEVEL=error"}, stderr: io.Discard} // one refusal line per bad record

// rootWorld is one root's place: root index of nroots on a world of n
// ranks, L ranks per instance, global or not; cluster and epoch are root
// 0's minted pair.
type rootWorld struct {
	nroots, index, n, l int
	global              bool
	cluster             uint64
	epoch               int64
}

// rootRingResult is the driver's answer.
type rootRingResult struct {
	ok        bool
	nextFirst abi.NcclSocketAddress
	cluster   uint64
	epoch     int64
}

func cRootRing(t testing.TB, w rootWorld, finish bool, a, b []byte) rootRingResult {
	mode := int32(0)
	if finish {
		mode = 1
	}
	return cRootRingMode(t, w, mode, a, b)
}

func cRootRingMode(t testing.TB, w rootWorld, mode int32, a, b []byte) rootRingResult {
	g := uint32(0)
	if w.global {
		g = 1
	}
	var rec []byte
	for _, v := range []int32{mode, int32(w.nroots), int32(w.index), int32(w.n), int32(w.l)} {
		rec = binary.LittleEndian.AppendUint32(rec, uint32(v))
	}
	rec = binary.LittleEndian.AppendUint32(rec, g)
	rec = binary.LittleEndian.AppendUint64(rec, w.cluster)
	rec = binary.LittleEndian.AppendUint64(rec, uint64(w.epoch))
	rec = append(binary.LittleEndian.AppendUint32(rec, uint32(len(a))), a...)
	rec = append(binary.LittleEndian.AppendUint32(rec, uint32(len(b))), b...)
	var res rootRingResult
	rootRingDriver.call(t, rec, func(r *bufio.Reader) error {
		var out [4 + abi.SizeofNcclSocketAddress + 16]byte
		if _, err := io.ReadFull(r, out[:]); err != nil {
			return err
		}
		res.ok = binary.LittleEndian.Uint32(out[:]) == uint32(abi.NRTSuccess)
		res.nextFirst.UnmarshalFrom(out[4:])
		res.cluster = binary.LittleEndian.Uint64(out[4+abi.SizeofNcclSocketAddress:])
		res.epoch = int64(binary.LittleEndian.Uint64(out[12+abi.SizeofNcclSocketAddress:]))
		return nil
	})
	return res
}

// refTakeRange is the rule a root holds its predecessor's range to: the
// magic, the same world, the index before its own, the rule's split.
func refTakeRange(w rootWorld, b []byte) bool {
	var rg abi.BootstrapRootRange
	rg.UnmarshalFrom(b)
	p := (w.index - 1 + w.nroots) % w.nroots
	lo, hi := tcp.RootRange(p, w.nroots, w.n, w.l, w.global)
	return rg.Sanity == abi.BootstrapRootSanity && int(rg.Nroots) == w.nroots && int(rg.Nranks) == w.n &&
		int(rg.PerInstance) == w.l && int(rg.Index) == p && int(rg.Lo) == lo && int(rg.Count) == hi-lo
}

// oneFrame is the payload of a default frame of exactly size bytes that
// opens b, or nil.
func oneFrame(b []byte, size int) []byte {
	if len(b) < 4+size || int32(binary.LittleEndian.Uint32(b)) != int32(size) {
		return nil
	}
	return b[4 : 4+size]
}

// refFinish is what a root takes from the next root (its first rank's
// record) and the previous one (the cluster id): each one frame of its
// size, its magic and index, an address of a family a rank can dial, and
// on root 0 the cluster id it minted, come back unchanged.
func refFinish(w rootWorld, fromNext, fromPrev []byte) rootRingResult {
	f, c := oneFrame(fromNext, abi.SizeofBootstrapRootFirst), oneFrame(fromPrev, abi.SizeofBootstrapRootCluster)
	if f == nil || c == nil {
		return rootRingResult{}
	}
	var first abi.BootstrapRootFirst
	first.UnmarshalFrom(f)
	if first.Sanity != abi.BootstrapRootSanity || int(first.Index) != (w.index+1)%w.nroots {
		return rootRingResult{}
	}
	if _, err := tcp.DecodeAddr(first.First); err != nil {
		return rootRingResult{}
	}
	var cl abi.BootstrapRootCluster
	cl.UnmarshalFrom(c)
	if cl.Sanity != abi.BootstrapRootSanity || cl.Index != 0 || w.index == 0 && (cl.ClusterID != w.cluster || cl.Epoch != w.epoch) {
		return rootRingResult{}
	}
	return rootRingResult{ok: true, nextFirst: first.First, cluster: cl.ClusterID, epoch: cl.Epoch}
}

// fuzzWorld makes a world the roots' checks accept from any numbers.
func fuzzWorld(nroots, index, n, l uint16, global bool, cluster uint64, epoch int64) rootWorld {
	w := rootWorld{n: 2 + int(n)%300, global: global, cluster: cluster, epoch: epoch}
	if l%3 != 0 {
		w.l = 1 + int(l)%16
	}
	unit := 1
	if tcp.Hierarchical(w.global, w.n, w.l) {
		unit = w.l
	}
	u := min((w.n+unit-1)/unit, 8) // the driver's roots list holds 8
	if u < 2 {
		w.n, w.l, u = 2, 0, 2
	}
	w.nroots = 2 + int(nroots)%(u-1)
	w.index = int(index) % w.nroots
	return w
}

func rangeRecord(w rootWorld, p int) []byte {
	lo, hi := tcp.RootRange(p, w.nroots, w.n, w.l, w.global)
	rg := abi.BootstrapRootRange{Sanity: abi.BootstrapRootSanity, Nroots: uint32(w.nroots), Index: uint32(p), Nranks: uint32(w.n),
		PerInstance: uint32(w.l), Lo: uint32(lo), Count: uint32(hi - lo)}
	b := make([]byte, abi.SizeofBootstrapRootRange)
	rg.MarshalTo(b)
	return b
}

func finishRecords(w rootWorld) (fromNext, fromPrev []byte) {
	f := abi.BootstrapRootFirst{Sanity: abi.BootstrapRootSanity, Index: uint32((w.index + 1) % w.nroots),
		First: tcp.EncodeAddr(netip.MustParseAddrPort("127.0.0.1:40001"))}
	fb := make([]byte, abi.SizeofBootstrapRootFirst)
	f.MarshalTo(fb)
	c := abi.BootstrapRootCluster{Sanity: abi.BootstrapRootSanity, ClusterID: w.cluster, Epoch: w.epoch}
	cb := make([]byte, abi.SizeofBootstrapRootCluster)
	c.MarshalTo(cb)
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(fb))), fb...), append(binary.LittleEndian.AppendUint32(nil, uint32(len(cb))), cb...)
}

// FuzzCRootRing holds libnccom's roots to the roots' ring rule for any
// record another root can send: the range its predecessor claims, the
// first-rank and cluster records, each taken exactly when the Go roots
// take it, and no memory error under ASan/UBSan. Cost: one small C build,
// then pipe speed.
func FuzzCRootRing(f *testing.F) {
	rootRingDriver.start(f) // built before the inputs run, as FuzzCAbortFrame's
	w := fuzzWorld(1, 1, 10, 0, true, 0x1234, 99)
	good := rangeRecord(w, 0)
	next, prev := finishRecords(w)
	f.Add(uint16(1), uint16(1), uint16(10), uint16(0), true, uint64(0x1234), int64(99), good, next, prev)
	bad := append([]byte(nil), good...)
	bad[20]++ // lo one past the rule's, as the faults build's root-wrong-range
	f.Add(uint16(1), uint16(1), uint16(10), uint16(0), true, uint64(0x1234), int64(99), bad, next[:20], prev)
	f.Add(uint16(3), uint16(0), uint16(40), uint16(4), true, uint64(7), int64(1), good, next, prev)
	f.Fuzz(func(t *testing.T, nroots, index, n, l uint16, global bool, cluster uint64, epoch int64, rg, fromNext, fromPrev []byte) {
		w := fuzzWorld(nroots, index, n, l, global, cluster, epoch)
		if err := tcp.CheckRoots("roots", w.nroots, w.n, w.l, w.global); err != nil {
			t.Fatalf("fuzzWorld made a world the roots refuse: %v", err)
		}
		rec := make([]byte, abi.SizeofBootstrapRootRange)
		copy(rec, rg)
		if got, want := cRootRing(t, w, false, rec, nil).ok, refTakeRange(w, rec); got != want {
			t.Fatalf("%+v: nccom_root_ring_take_range(% x) took it %v, the rule says %v", w, rec, got, want)
		}
		fromNext, fromPrev = fromNext[:min(len(fromNext), 1024)], fromPrev[:min(len(fromPrev), 1024)]
		got, want := cRootRing(t, w, true, fromNext, fromPrev), refFinish(w, fromNext, fromPrev)
		if got.ok != want.ok || got.ok && got != want {
			t.Fatalf("%+v: nccom_root_ring_finish(% x, % x) = %+v, the rule says %+v", w, fromNext, fromPrev, got, want)
		}
	})
}

// TestCRootRingPlanted: the rule's own records are taken, and each planted
// fault — the range one rank off, a first-rank record of another index, a
// cluster id changed on its way round to root 0 — is refused by the C root
// as by the rule.
func TestCRootRingPlanted(t *testing.T) {
	w := fuzzWorld(1, 0, 10, 0, true, 0xfeed, 5) // 3 roots, this one root 0
	p := (w.index - 1 + w.nroots) % w.nroots
	if !cRootRing(t, w, false, rangeRecord(w, p), nil).ok {
		t.Fatalf("%+v: the rule's range of root %d was refused", w, p)
	}
	bad := rangeRecord(w, p)
	bad[20]++
	if cRootRing(t, w, false, bad, nil).ok {
		t.Errorf("%+v: a range one rank off was taken", w)
	}
	next, prev := finishRecords(w)
	if got := cRootRing(t, w, true, next, prev); !got.ok || got != refFinish(w, next, prev) {
		t.Fatalf("%+v: the rule's records gave %+v", w, got)
	}
	other := append([]byte(nil), next...)
	other[8]++ // the index
	changed := append([]byte(nil), prev...)
	changed[12]++ // the cluster id
	for what, c := range map[string][2][]byte{"a first-rank record of another index": {other, prev}, "a changed cluster id": {next, changed}} {
		if cRootRing(t, w, true, c[0], c[1]).ok {
			t.Errorf("%+v: %s was taken", w, what)
		}
	}
}

// cRootRecord is libnccom's reading (nccom_root_rec_parse) of one record
// of the extended roots' ring past the reply.
func cRootRecord(t testing.TB, w rootWorld, b []byte) (tcp.RootRecord, bool) {
	res := cRootRingMode(t, w, 2, b, nil)
	o := make([]byte, abi.SizeofNcclSocketAddress)
	res.nextFirst.MarshalTo(o)
	return tcp.RootRecord{Done: o[0] == 1, Origin: int(int32(binary.LittleEndian.Uint32(o[1:]))), Rank: int(int32(binary.LittleEndian.Uint32(o[5:]))),
		Kind: binary.LittleEndian.Uint32(o[9:])}, res.ok
}

// FuzzCRootRecord holds libnccom's reader of the done and abort records
// the roots pass round in the extended framing
// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring) to the Go
// roots' (tcp.ParseRootRecord): the same records taken, with the same
// fields, no memory error under ASan/UBSan. TestCRootRecordPlanted is its
// planted fault. Cost: the driver's build, then pipe speed.
func FuzzCRootRecord(f *testing.F) {
	rootRingDriver.start(f)
	done := func(nroots, index, count uint32) []byte {
		b := make([]byte, abi.SizeofBootstrapRootDone)
		d := abi.BootstrapRootDone{Sanity: abi.BootstrapRootSanity, Nroots: nroots, Index: index, Count: count}
		d.MarshalTo(b)
		return b
	}
	ab := abortOf(2, 7, "went")
	f.Add(uint16(1), uint16(1), uint16(10), uint16(0), done(3, 0, 4))
	f.Add(uint16(1), uint16(1), uint16(10), uint16(0), append(ab, "went"...))
	f.Add(uint16(1), uint16(1), uint16(10), uint16(0), done(3, 1, 3))
	f.Fuzz(func(t *testing.T, nroots, index, n, l uint16, b []byte) {
		w := fuzzWorld(nroots, index, n, l, true, 0, 0)
		b = b[:min(len(b), abi.SizeofBootstrapRootAbort+int(abi.BootstrapAbortTextMax)+8)]
		want, err := tcp.ParseRootRecord(b, w.index, w.nroots, w.n, w.l)
		got, ok := cRootRecord(t, w, b)
		if ok != (err == nil) || ok && got != want {
			t.Fatalf("%+v: nccom_root_rec_parse(% x) took it %v as %+v; the Go roots %+v, %v", w, b, ok, got, want, err)
		}
	})
}

// TestCRootRecordPlanted: an honest done and abort are taken, and each
// planted fault — a done of this root's own index, one with another count,
// an abort naming a rank of another range — is refused by the C root as by
// the Go roots.
func TestCRootRecordPlanted(t *testing.T) {
	w := fuzzWorld(1, 1, 10, 0, true, 0, 0)
	for _, c := range []struct {
		what string
		rec  func() []byte
		take bool
	}{
		{"the previous root's done", func() []byte { return doneOf(w, (w.index+w.nroots-1)%w.nroots, 0) }, true},
		{"this root's own done, come back", func() []byte { return doneOf(w, w.index, 0) }, false},
		{"a done one rank short", func() []byte { return doneOf(w, (w.index+w.nroots-1)%w.nroots, -1) }, false},
		{"the previous root's abort for its first rank", func() []byte {
			p := (w.index + w.nroots - 1) % w.nroots
			lo, _ := tcp.RootRange(p, w.nroots, w.n, w.l, w.global)
			return abortOf(p, lo, "went")
		}, true},
		{"an abort naming a rank of another range", func() []byte {
			p := (w.index + w.nroots - 1) % w.nroots
			_, hi := tcp.RootRange(p, w.nroots, w.n, w.l, w.global)
			return abortOf(p, hi%w.n, "went")
		}, false},
	} {
		b := c.rec()
		_, goErr := tcp.ParseRootRecord(b, w.index, w.nroots, w.n, w.l)
		_, ok := cRootRecord(t, w, b)
		if ok != c.take || (goErr == nil) != c.take {
			t.Errorf("%+v: %s: C took it %v, Go %v, want %v", w, c.what, ok, goErr, c.take)
		}
	}
}

func doneOf(w rootWorld, i, off int) []byte {
	lo, hi := tcp.RootRange(i, w.nroots, w.n, w.l, w.global)
	b := make([]byte, abi.SizeofBootstrapRootDone)
	d := abi.BootstrapRootDone{Sanity: abi.BootstrapRootSanity, Nroots: uint32(w.nroots), Index: uint32(i), Count: uint32(hi - lo + off)}
	d.MarshalTo(b)
	return b
}

func abortOf(i, rank int, text string) []byte {
	b := make([]byte, abi.SizeofBootstrapRootAbort)
	a := abi.BootstrapRootAbort{Sanity: abi.BootstrapRootSanity, Index: uint32(i), Rank: int32(rank), Kind: abi.BootstrapRootAbortReport, TextLen: uint32(len(text))}
	a.MarshalTo(b)
	return append(b, text...)
}
