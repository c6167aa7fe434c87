package collectives

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/transport"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

func TestGroupShape(t *testing.T) {
	seq := func(lo, hi uint32) []uint32 {
		var v []uint32
		for p := lo; p < hi; p++ {
			v = append(v, p)
		}
		return v
	}
	cat := func(vs ...[]uint32) []uint32 {
		var out []uint32
		for _, v := range vs {
			out = append(out, v...)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		worldL int
		bp     []uint32
		want   int
		why    string
	}{
		{"world", 8, seq(0, 64), 8, ""},
		{"ragged-last-instance", 8, seq(0, 19), 8, ""},
		{"subset-of-instances", 8, cat(seq(0, 4), seq(16, 20), seq(40, 43)), 4, ""},
		{"flat-world", 0, seq(0, 64), 0, "the world is flat"},
		{"one-instance", 8, seq(8, 16), 0, "within one instance"},
		{"instance-twice", 8, cat(seq(0, 4), seq(8, 12), seq(4, 8)), 0, "visit world instance 0 twice"},
		{"uneven-runs", 8, cat(seq(0, 8), seq(8, 12), seq(16, 24)), 0, "run 1 has 4"},
		{"last-run-longer", 8, cat(seq(0, 4), seq(8, 16)), 0, "run 1 has 8"},
		{"one-per-instance", 8, []uint32{0, 8, 16, 24}, 0, "one participant per instance"},
	} {
		l, why := groupShape(tc.worldL, tc.bp)
		if l != tc.want || !strings.Contains(why, tc.why) || (tc.want > 0) != (why == "") {
			t.Errorf("%s: groupShape = %d %q, want %d %q", tc.name, l, why, tc.want, tc.why)
		}
	}
}

func TestGroupInitFromEnv(t *testing.T) {
	for v, want := range map[string]GroupInit{"": GroupInitSplit, "split": GroupInitSplit, "flat": GroupInitFlat, "hier": GroupInitHier} {
		got, err := GroupInitFromEnv(func(string) string { return v })
		if err != nil || got != want {
			t.Errorf("%s=%q: %v %v, want %v", EnvGroupInit, v, got, err, want)
		}
	}
	if _, err := GroupInitFromEnv(func(string) string { return "Hier" }); err == nil || !strings.Contains(err.Error(), EnvGroupInit) {
		t.Errorf("a bad value is not refused by name: %v", err)
	}
}

// hierEndpoint is an in-process endpoint that says its world is
// hierarchical with L ranks per instance, as tcp.Endpoint does.
type hierEndpoint struct {
	transport.Transport
	l int
}

func (e hierEndpoint) Hier() (bool, int) { return e.l > 0, e.l }

// hierComms is inproc.Comms with the 2-tier calls, counting them.
type hierComms struct {
	*inproc.Comms
	uids, inits atomic.Int32
	lastL       atomic.Int32
}

func (c *hierComms) GetUniqueIDHier(id *UniqueID, rankN, l int, hint string) error {
	c.uids.Add(1)
	c.lastL.Store(int32(l))
	return c.GetUniqueID(id, rankN, hint)
}

func (c *hierComms) InitCommHier(rankN int, id *UniqueID, rank, l int, bypassGraph bool) (uintptr, error) {
	c.inits.Add(1)
	c.lastL.Store(int32(l))
	return c.InitComm(rankN, id, rank, bypassGraph)
}

// hierSetup sets up the global comms of an n-rank in-process world with the
// 2-tier group init asked for, world L l, over comms.
func hierSetup(t *testing.T, n, l int, comms Comms) []error {
	rt, err := New(&testIDs{}, comms, Options{Logger: quiet, GroupHierarchy: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	w, err := inproc.NewWorld(n, inproc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	for r := 0; r < n; r++ {
		if err := rt.InitGlobalComm(uint32(r), uint32(r), uint32(n), 0, "", true); err != nil {
			t.Fatal(err)
		}
	}
	return each(n, func(r int) error {
		var tr transport.Transport = w.Endpoint(r)
		if l >= 0 {
			tr = hierEndpoint{tr, l}
		}
		err := rt.SetupGlobalComm(r, 0, tr)
		if err != nil {
			_ = w.Endpoint(r).Close()
		}
		return err
	})
}

// TestGroupInitHier: the global group of a hierarchical world of 8 (L 4)
// takes the 2-tier comm init: one hierarchical unique id, eight hierarchical
// inits, all with L 4; a flat world's takes the flat ones. The refusals: a
// comm layer without the 2-tier init, a transport that cannot say its
// shape, each named.
func TestGroupInitHier(t *testing.T) {
	c := &hierComms{Comms: &inproc.Comms{}}
	noErrors(t, "hierarchical world", hierSetup(t, 8, 4, c))
	if c.uids.Load() != 1 || c.inits.Load() != 8 || c.lastL.Load() != 4 {
		t.Errorf("hierarchical world: %d hierarchical unique ids, %d hierarchical inits, L %d; want 1, 8, 4", c.uids.Load(), c.inits.Load(), c.lastL.Load())
	}
	c = &hierComms{Comms: &inproc.Comms{}}
	noErrors(t, "flat world", hierSetup(t, 8, 0, c))
	if c.uids.Load() != 0 || c.inits.Load() != 0 {
		t.Errorf("flat world: %d hierarchical unique ids, %d hierarchical inits, want none", c.uids.Load(), c.inits.Load())
	}
	for _, tc := range []struct {
		name  string
		comms Comms
		l     int
		want  string
	}{
		{"no-2-tier-comm-init", &inproc.Comms{}, 4, "has no 2-tier comm init"},
		{"transport-without-shape", &hierComms{Comms: &inproc.Comms{}}, -1, "does not say whether its world is hierarchical"},
	} {
		for r, err := range hierSetup(t, 4, tc.l, tc.comms) {
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), EnvGroupInit) {
				t.Errorf("%s: rank %d: %v, want %q", tc.name, r, err, tc.want)
			}
		}
	}
}
