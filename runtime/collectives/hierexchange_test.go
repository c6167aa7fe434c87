package collectives

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// preparingEndpoint is an in-process endpoint of a hierarchical world of l per
// instance (what tcp.Endpoint.Hier says), recording what it was asked to
// prepare.
type preparingEndpoint struct {
	*inproc.Endpoint
	l        int
	prepared *[]int
}

func (e preparingEndpoint) Hier() (bool, int) { return e.l > 0, e.l }
func (e preparingEndpoint) Prepare(peers []int) {
	*e.prepared = append(*e.prepared, peers...)
}

// newHierWorld is newWorld over endpoints that report a world of l per
// instance; prepared[r] is what rank r's exchanges asked to open ahead.
func newHierWorld(t *testing.T, n, l int) (*world, [][]int) {
	t.Helper()
	comms := &inproc.Comms{}
	rt := newRuntime(t, &testIDs{}, comms)
	w, err := inproc.NewWorld(n, inproc.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	prepared := make([][]int, n)
	for r := 0; r < n; r++ {
		if err := rt.InitGlobalComm(uint32(r), uint32(r), uint32(n), 0, "127.0.0.1:62182", true); err != nil {
			t.Fatal(err)
		}
	}
	noErrors(t, "SetupGlobalComm", each(n, func(r int) error {
		return rt.SetupGlobalComm(r, 0, preparingEndpoint{Endpoint: w.Endpoint(r), l: l, prepared: &prepared[r]})
	}))
	w.ResetStats()
	for r := range prepared {
		prepared[r] = nil
	}
	return &world{rt: rt, w: w, comms: comms, n: n}, prepared
}

// expectedHierTrace is every message of one exchange over instances of l,
// in bootstrap ranks mapped through bp: each member's signature to its
// leader, each leader's to the root, the id from the root to each leader
// and from each leader to its members.
func expectedHierTrace(bp []uint32, l int) []inproc.Message {
	var out []inproc.Message
	sig, uid := int(abi.EncSigMsgSize), int(abi.EncUIDMsgSize)
	for i := 1; i < len(bp); i++ {
		up := i / l * l
		if up == i {
			up = 0
		}
		out = append(out,
			inproc.Message{Src: int(bp[i]), Dst: int(bp[up]), Size: sig},
			inproc.Message{Src: int(bp[up]), Dst: int(bp[i]), Size: uid})
	}
	return sortTrace(out)
}

// TestAgreeOverInstances: on a hierarchical world the world group's
// exchange takes the instances (exactly the messages of expectedHierTrace,
// N-1 of each size as the seed's), agrees, and a signature that differs
// at the root, a leader, a member or the last rank fails every rank with
// the seed's message and lets none reach comm init.
func TestAgreeOverInstances(t *testing.T) {
	for _, tc := range []struct{ n, l int }{{8, 4}, {10, 4}, {9, 4}, {17, 4}, {64, 8}} {
		t.Run(fmt.Sprintf("N=%d,L=%d", tc.n, tc.l), func(t *testing.T) {
			wd, prepared := newHierWorld(t, tc.n, tc.l)
			bp := identity(tc.n)
			nodes, errs := wd.bootstrap(groups(bp, 3), 1, false)
			noErrors(t, "bootstrap", errs)
			if got, want := sortTrace(wd.w.Trace()), expectedHierTrace(bp, tc.l); !slices.Equal(got, want) {
				t.Fatalf("messages\n got %v\nwant %v", got, want)
			}
			// What each rank opened ahead: every send that follows a
			// receive, none that is its first act.
			g := hierGroup{n: tc.n, l: tc.l}
			for r := range tc.n {
				g.rank = r
				if want := g.laterSends(); !slices.Equal(prepared[r], want) {
					t.Fatalf("rank %d prepared %v, want %v", r, prepared[r], want)
				}
				if r != g.leader() && len(prepared[r]) != 0 {
					t.Fatalf("member %d prepared %v: its one send is its first act", r, prepared[r])
				}
			}
			for _, node := range nodes {
				if err := wd.rt.Release(node); err != nil {
					t.Fatal(err)
				}
			}
			leader := tc.l
			sites := map[string]int{"root": 0, "a leader": leader, "a member": leader + 1, "the last rank": tc.n - 1}
			for site, bad := range sites {
				wd.w.ResetStats()
				before := wd.comms.Stats().Inits
				rgs := groups(bp, 3)
				rgs[bp[bad]].Signature[3] ^= 0x10
				_, errs := wd.bootstrap(rgs, 1, false)
				for gid, err := range errs {
					if err == nil {
						t.Fatalf("mismatch at %s (rank %d): device %d bootstrapped", site, bad, gid)
					}
					exactly(t, err, sigFailed(gid))
				}
				if inits := wd.comms.Stats().Inits - before; inits != 0 {
					t.Fatalf("mismatch at %s: %d ranks reached comm init", site, inits)
				}
			}
		})
	}
}

// TestAgreeShape: the instances are taken only on a hierarchical world
// and a group lying on them; a flat world, a world that does not say, and
// a group across the instances keep the seed's tree and cube (the trace
// of TestBootstrapWorlds), with the flat sends that follow a receive
// prepared.
func TestAgreeShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    int
		bp   []uint32
		want int
	}{
		{"hierarchical, the world in order", 4, identity(12), 4},
		{"flat world", 0, identity(12), 0},
		{"a group across the instances", 4, shuffled(12, 7), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wd, prepared := newHierWorld(t, 12, tc.l)
			if got := agreeShape(preparingEndpoint{Endpoint: wd.w.Endpoint(0), l: tc.l}, tc.bp); got != tc.want {
				t.Fatalf("agreeShape = %d, want %d", got, tc.want)
			}
			_, errs := wd.bootstrap(groups(tc.bp, 3), 1, false)
			noErrors(t, "bootstrap", errs)
			want := expectedTrace(tc.bp)
			if tc.want > 0 {
				want = expectedHierTrace(tc.bp, tc.want)
			}
			if got := sortTrace(wd.w.Trace()); !slices.Equal(got, want) {
				t.Fatalf("messages\n got %v\nwant %v", got, want)
			}
			if tc.want == 0 {
				for i, gid := range tc.bp {
					var want []int
					for _, r := range flatLaterSends(i, len(tc.bp)) {
						want = append(want, int(tc.bp[r]))
					}
					if !slices.Equal(prepared[gid], want) {
						t.Fatalf("bootstrap rank %d prepared %v, want %v", i, prepared[gid], want)
					}
				}
			}
		})
	}
	// Not a hierarchical transport at all: the seed's shape.
	wd := newWorld(t, 4, inproc.Options{})
	if l := agreeShape(wd.w.Endpoint(0), identity(4)); l != 0 {
		t.Fatalf("an endpoint that does not say its shape got L %d", l)
	}
}

// TestFlatLaterSends: the tree parent is prepared only by a rank with a
// child to hear first (a leaf's send is its first act), every cube child
// always.
func TestFlatLaterSends(t *testing.T) {
	for _, tc := range []struct {
		rank, n int
		want    []int
	}{
		{0, 8, []int{4, 2, 1}},
		{1, 8, []int{0}},    // children 3, 4; cube mask 1: no cube children
		{2, 8, []int{0, 3}}, // children 5, 6; cube child 3
		{4, 8, []int{6, 5}}, // a leaf: parent 1 not prepared
		{7, 8, nil},
		{3, 5, nil}, // children 7, 8 beyond 5
	} {
		if got := flatLaterSends(tc.rank, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("flatLaterSends(%d, %d) = %v, want %v", tc.rank, tc.n, got, tc.want)
		}
	}
}
