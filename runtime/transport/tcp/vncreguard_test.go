package tcp

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// movingVNC answers nrt_get_total_vnc_count from a script, one answer per
// query (the last repeats), and counts the queries.
type movingVNC struct {
	answers []uint32
	fail    int // the query (1-based) that fails; 0: none
	n       atomic.Int32
}

func (m *movingVNC) TotalVNCCount() (uint32, error) {
	i := int(m.n.Add(1))
	if i == m.fail {
		return 0, errors.New("planted query failure")
	}
	return m.answers[min(i, len(m.answers))-1], nil
}

// TestFlatVNCReguard: bootstrapInitFlat asks nrt_get_total_vnc_count again
// after bootstrapInit's gate (docs/sources.md#s001-3, extension
// flat-vnc-reguard-no-assert). A count that moves from 0 to 4 between the
// two queries, or a second query that fails, is refused before any socket
// is opened (the root, which would otherwise see this rank, sees nobody); a
// steady 0 bootstraps with exactly two queries on the flat path, and a
// hierarchical rank asks once. Cost: two one-rank worlds and a hierarchical
// world of 4 on loopback, under a second.
func TestFlatVNCReguard(t *testing.T) {
	for _, tc := range []struct {
		name string
		vnc  *movingVNC
		want string
	}{
		{"count-moves", &movingVNC{answers: []uint32{0, 4}}, cfmt.Sprintf(abi.MsgNccomFlatVNCReguard, 0, uint32(4))},
		{"second-query-fails", &movingVNC{answers: []uint32{0}, fail: 2}, "planted query failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := loopRoot(t, testNet(t, time.Second), 1, true)
			n := NewNet(Config{Timeout: time.Second, IfName: "lo", Logger: quietLog, VNC: tc.vnc})
			e, err := n.InitFlat(t.Context(), root.Addr(), 0, 1, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) || e != nil {
				t.Fatalf("InitFlat: %v, %v; want an error with %q", e, err, tc.want)
			}
			if q := tc.vnc.n.Load(); q != 2 {
				t.Errorf("%d queries of the count, want 2", q)
			}
			if n.iface != nil {
				t.Error("the interface was chosen: the re-guard did not come first")
			}
		})
	}
	t.Run("steady-zero", func(t *testing.T) {
		vnc := &movingVNC{answers: []uint32{0}}
		_, errs, _ := world(t, 1, true, time.Second, func(_ int, c *Config) { c.VNC = vnc })
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		if q := vnc.n.Load(); q != 2 {
			t.Errorf("the flat path asked for the count %d times, want 2 (the gate and the re-guard)", q)
		}
	})
	t.Run("hierarchical-asks-once", func(t *testing.T) {
		vncs := make([]*movingVNC, 4)
		for r := range vncs {
			vncs[r] = &movingVNC{answers: []uint32{0, 4}}
		}
		_, errs, _ := hierWorld(t, false, 4, 2, same(2), func(r int, c *Config) { c.VNC = vncs[r] })
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
			if q := vncs[r].n.Load(); q != 1 {
				t.Errorf("rank %d: the hierarchical path asked for the count %d times, want 1", r, q)
			}
		}
	})
}
