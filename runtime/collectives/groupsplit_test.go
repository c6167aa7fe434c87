package collectives

import (
	"sync/atomic"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/transport"
	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// splitComms is inproc.Comms with the split calls, counting them and the
// world each was given.
type splitComms struct {
	*inproc.Comms
	uids, inits atomic.Int32
	badWorld    atomic.Bool
}

func (c *splitComms) GetUniqueIDSplit(world transport.Transport, id *UniqueID, rankN int, hint string) error {
	c.uids.Add(1)
	if world.Size() != rankN {
		c.badWorld.Store(true)
	}
	return c.GetUniqueID(id, rankN, hint)
}

func (c *splitComms) InitCommSplit(world transport.Transport, rankN int, id *UniqueID, rank int, bypassGraph bool) (uintptr, error) {
	c.inits.Add(1)
	if world.Size() != rankN || world.Rank() != rank {
		c.badWorld.Store(true)
	}
	return c.InitComm(rankN, id, rank, bypassGraph)
}

// TestGroupInitSplit: by default the global group of an in-process world
// of 8 (the whole world in order) takes the split calls with this rank's
// world: one split unique id, eight split inits; with GroupInit flat none.
// worldInOrder, which decides it, refuses a subset and another order.
// Cost: milliseconds.
func TestGroupInitSplit(t *testing.T) {
	for _, tc := range []struct {
		mode        GroupInit
		uids, inits int32
	}{{GroupInitSplit, 1, 8}, {GroupInitFlat, 0, 0}} {
		c := &splitComms{Comms: &inproc.Comms{}}
		rt, err := New(&testIDs{}, c, Options{Logger: quiet, GroupInit: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		w, err := inproc.NewWorld(8, inproc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 8; r++ {
			if err := rt.InitGlobalComm(uint32(r), uint32(r), 8, 0, "", true); err != nil {
				t.Fatal(err)
			}
		}
		noErrors(t, tc.mode.String(), each(8, func(r int) error { return rt.SetupGlobalComm(r, 0, w.Endpoint(r)) }))
		if c.uids.Load() != tc.uids || c.inits.Load() != tc.inits || c.badWorld.Load() {
			t.Errorf("%s: %d split unique ids, %d split inits (wrong world: %v); want %d, %d", tc.mode, c.uids.Load(), c.inits.Load(), c.badWorld.Load(), tc.uids, tc.inits)
		}
		rt.Close()
		w.Close()
	}
	for _, tc := range []struct {
		bp   []uint32
		n    int
		want bool
	}{
		{[]uint32{0, 1, 2, 3}, 4, true},
		{[]uint32{0, 1, 2}, 4, false},
		{[]uint32{0, 2, 1, 3}, 4, false},
		{[]uint32{1, 2, 3, 4}, 4, false},
	} {
		if got := worldInOrder(tc.bp, tc.n); got != tc.want {
			t.Errorf("worldInOrder(%v, %d) = %v, want %v", tc.bp, tc.n, got, tc.want)
		}
	}
}
