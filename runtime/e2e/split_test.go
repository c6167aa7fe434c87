package e2e

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// The split unique id (docs/bootstrap.md#group-comm-split) read by the
// reference libnccom (split.c, with ASan/UBSan when the compiler has them)
// against the Go ranks' reading (runtime/transport/tcp splitid.go): one
// wire, the same verdict and fields for any 128 bytes.
var splitDriver = &cDriver{name: "splitcheck", libnccom: []string{"split.c", "log.c"},
	env: []string{"NRTABI_LOG_LEVEL=error"}, stderr: io.Discard} // one refusal line per bad id

// cSplit is nccom_split_decode of id: its verdict, fields and re-encoding.
func cSplit(t testing.TB, id *tcp.UniqueID) (int32, tcp.SplitID, tcp.UniqueID) {
	var b [36 + abi.NcclUniqueIDBytes]byte
	splitDriver.call(t, id[:], func(r *bufio.Reader) error {
		_, err := io.ReadFull(r, b[:])
		return err
	})
	le := binary.LittleEndian
	s := tcp.SplitID{WorldSize: le.Uint32(b[4:]), Cluster: le.Uint64(b[8:]), Epoch: int64(le.Uint64(b[16:])),
		RankN: le.Uint32(b[24:]), Root: le.Uint32(b[28:]), Serial: le.Uint32(b[32:])}
	var back tcp.UniqueID
	copy(back[:], b[36:])
	return int32(le.Uint32(b[:])), s, back
}

// FuzzCSplitID holds the C decode of a split id to the Go one: a root id
// or garbage is no split id on both sides, a refused id refused on both, a
// decoded one decodes to the same fields, and C's encoding of them is the
// input byte for byte.
func FuzzCSplitID(f *testing.F) {
	good := tcp.EncodeSplitID(tcp.SplitID{WorldSize: 16, Cluster: 0xabcdef, Epoch: 1700000000, RankN: 16, Root: 3, Serial: 2})
	f.Add(good[:])
	bad := good
	bad[100] = 1
	f.Add(bad[:])
	bad = good
	bad[32] = 15
	f.Add(bad[:])
	f.Add([]byte("nrtsplit\x01"))
	f.Add([]byte{2, 0, 0x1f, 0x90, 127, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var id tcp.UniqueID
		copy(id[:], b)
		v, cs, back := cSplit(t, &id)
		gs, err := tcp.DecodeSplitID(&id)
		want := int32(1)
		if errors.Is(err, tcp.ErrNotSplit) {
			want = 0
		} else if err != nil {
			want = -1
		}
		if v != want {
			t.Fatalf("%x: C verdict %d, Go %v", id, v, err)
		}
		if v == 1 && (cs != gs || back != id) {
			t.Fatalf("%x: C %+v (re-encoded %x), Go %+v", id, cs, back, gs)
		}
	})
}

// TestMixedSplitDisagreement: in a mixed world of 4 (Go ranks 0 and 2, C
// hosts 1 and 3), one rank on the seed's flat path
// (NRTABI_BOOTSTRAP_GROUP_INIT=flat) is given the world group's split id:
// a C host and a Go rank each refuse it by name. With every rank flat the
// world agrees on a loopback root, the seed's path. Cost: three worlds of
// 4 processes, about a second.
func TestMixedSplitDisagreement(t *testing.T) {
	requireWorld(t)
	mixed := func(flat ...int) []member {
		ms := make([]member, 4)
		for r := range ms {
			ms[r].goRank = r%2 == 0
		}
		for _, r := range flat {
			ms[r].env = append(ms[r].env, abi.EnvBootstrapGroupInit+"=flat")
		}
		return ms
	}
	for _, bad := range []int{3, 2} {
		runs, _ := runWorld(t, mixed(bad))
		run := runs[bad]
		text := run.Fields["error"] + "\n" + run.Stderr
		if run.Exit == 0 || !strings.Contains(text, "split of the world") || !strings.Contains(text, abi.EnvBootstrapGroupInit) {
			t.Errorf("rank %d (go=%v) on the flat path: exit %d, want the split id refused by name:\n%s", bad, bad%2 == 0, run.Exit, text)
		}
	}
	runs, _ := runWorld(t, mixed(0, 1, 2, 3))
	agree(t, runs)
	if id := runs[0].Fields["unique_id"]; !strings.HasPrefix(id, "127.0.0.1:") {
		t.Errorf("every rank flat: unique id %q, want the seed's loopback root", id)
	}
	if !bytes.Contains([]byte(runs[1].Fields["line"]), []byte("verdict=ok")) {
		t.Errorf("every rank flat: the C host did not agree: %s", runs[1].Fields["line"])
	}
}
