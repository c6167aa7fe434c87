package launch

import (
	"strings"
	"testing"
	"time"
)

func failedRank(rank int, err string, ended time.Duration) *localRank {
	return &localRank{rank: rank, exit: 1, ended: ended, fields: map[string]string{"line": "rank=...", "error": err}}
}

// The root cause line picks the dead rank out of errors that each blame a
// neighbour, in the shapes the Go ranks report today and the abort
// reports of runtime/transport/tcp (docs/nrtabi-runtime-bootstrap.md#when-a-rank-fails).
func TestRootCause(t *testing.T) {
	dead := &localRank{rank: 3, exit: -1, signal: "killed", ended: 50 * time.Millisecond, fields: map[string]string{}}
	for _, c := range []struct {
		name  string
		ranks []*localRank
		want  string
	}{
		{"closed connections", []*localRank{
			failedRank(0, "initTransportRank AllGather1: rank 0: waiting for RING_DATA: rank 3 (peer 127.0.0.1:53406) closed the connection (did its process die?)", time.Millisecond),
			failedRank(1, "initTransportRank AllGather1: rank 1: waiting for RING_DATA: rank 0 (peer 127.0.0.1:32794) closed the connection", 0),
			failedRank(2, "initTransportRank AllGather1: rank 2: sending RING_DATA to rank 3 (127.0.0.1:34915): the connection is gone", 2*time.Millisecond),
			dead,
		}, "bootstrap --local 4: root cause: rank 3 was ended by signal killed 0.05s in, its address 127.0.0.1:34915, during initTransportRank AllGather1 (named by 2 other rank(s); rank 2: "},
		{"abort reports", []*localRank{
			failedRank(0, "initTransportRank AllGather1: rank 0: aborted by rank 2 (abort frame from 127.0.0.1:4000): rank 3 (127.0.0.1:40211) went in the flat ring all-gather, step 1: closed", 0),
			failedRank(1, "initTransportRank AllGather1: rank 1: aborted by rank 2 (abort frame from 127.0.0.1:4001): rank 3 (127.0.0.1:40211) went in the flat ring all-gather, step 1: closed", 0),
			failedRank(2, "initTransportRank AllGather1: flat ring all-gather, step 1: rank 3 (peer 127.0.0.1:5555) closed the connection", 0),
			dead,
		}, "root cause: rank 3 was ended by signal killed 0.05s in, its address 127.0.0.1:40211, during flat ring all-gather, step 1 (named by 3 other rank(s); rank 0: "},
		// Only the roots could tell: they name its listen address and phase.
		{"told by the roots", []*localRank{
			failedRank(0, "bootstrap aborted by the root: bootstrap root 127.0.0.1:9000: peer 127.0.0.1:51000 rank 3 (listening on 127.0.0.1:40211, after its INFO_FROM_ROOT went out, before its RING_DONE) closed its root connection before the world was complete (did its process die?)", 0),
			failedRank(1, "down phase (one frame down the instance), step 0: rank 3 (peer 127.0.0.1:5555) closed the connection", 0),
			dead,
		}, "root cause: rank 3 was ended by signal killed 0.05s in, its address 127.0.0.1:40211, after its INFO_FROM_ROOT went out, before its RING_DONE, as its root saw it hang up (named by 2 other rank(s); rank 0: "},
		{"no one names it", []*localRank{failedRank(0, "nothing from the root within 2s", 0), dead},
			"root cause: rank 3 was ended by signal killed 0.05s in; no other rank names it"},
		// Every process alive to report: the abort reports name the rank.
		{"reported gone", []*localRank{
			failedRank(0, "rank 0: aborted by rank 1 (abort frame from x): rank 2 (127.0.0.1:7) went in the intra ring all-gather, step 0: timeout", 0),
			failedRank(1, "intra ring all-gather, step 0: rank 2 (127.0.0.1:7) did not answer", 0),
			failedRank(2, "rank 2: aborted by rank 1 (abort frame from y): rank 2 (127.0.0.1:7) went in the intra ring all-gather, step 0: timeout", 0),
		}, "root cause: rank 2 went, as the other ranks report, its address 127.0.0.1:7, during intra ring all-gather, step 0 (named by 2 other rank(s); rank 0: "},
		{"first failure", []*localRank{failedRank(0, "late", 9*time.Millisecond), failedRank(1, "signature validation failed for rank 1\x1b[2J", time.Millisecond)},
			`root cause: rank 1 failed first (exited 1 0.00s in): signature validation failed for rank 1\x1b[2J`},
	} {
		if got := rootCause(c.ranks); !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// The ranks' errors are outside text (a rank program other than bootstrap
// prints what it likes): any of them gives one line with no control byte.
func FuzzRootCause(f *testing.F) {
	f.Add("rank 0: aborted by rank 1 (abort frame from x): rank 2 (127.0.0.1:7) went in the flat ring all-gather, step 0: t", "rank 2 (peer 1.2.3.4:5) closed", true)
	f.Add("rank 9 (x) went in the , step -1", "\x1b[2J\nforged line", false)
	f.Add("peer a rank 2 (listening on 1.2.3.4:5, after its INFO_FROM_ROOT went out, before its RING_DONE) closed its root connection", "rank 2 (listening on \x1b[2J, x) closed its root connection", true)
	f.Fuzz(func(t *testing.T, e0, e1 string, kill bool) {
		third := failedRank(2, "x", 0)
		if kill {
			third = &localRank{rank: 2, exit: -1, signal: "killed", fields: map[string]string{}}
		}
		got := rootCause([]*localRank{failedRank(0, e0, 0), failedRank(1, e1, time.Millisecond), third})
		if !strings.HasPrefix(got, "bootstrap --local 3: root cause: rank ") {
			t.Fatalf("%q", got)
		}
		for _, c := range []byte(got) {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("control byte %#x in %q", c, got)
			}
		}
	})
}
