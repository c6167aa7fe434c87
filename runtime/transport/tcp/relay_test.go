package tcp

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/hostile"
)

// TestForgedRelayNamesTheForger: in a hierarchical world of 5 ranks, 2 per
// instance, rank 4 leads the short last instance and passes on forged
// copies of other ranks' peer records (each slot of a block holding the
// block's first record). The rank that receives them names rank 4, the
// relay, as the forger; no rank blames rank 3, whose slot was forged.
func TestForgedRelayNamesTheForger(t *testing.T) {
	const n, l, forger = 5, 2, 4
	for _, extended := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "extended"}[extended], func(t *testing.T) {
			cfg := func(r int) Config {
				c := Config{Timeout: 3 * time.Second, IfName: "lo", Logger: quietLog, Extended: extended, PerInstance: l}
				if r == forger {
					c.Hooks = &Hooks{Relay: func(out []byte, rec int) []byte {
						if rec != abi.SizeofNcclPeerInfo {
							return out
						}
						return hostile.ForgeRelay(out, rec)
					}}
				}
				return c
			}
			root := loopRoot(t, NewNet(cfg(-1)), n, true)
			eps := make([]*Endpoint, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for r := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					eps[r], errs[r] = NewNet(cfg(r)).InitComm(t.Context(), root.Addr(), r, n, true)
				}()
			}
			wg.Wait()
			t.Cleanup(func() {
				for _, e := range eps {
					e.Close()
				}
			})
			named := false
			for r, err := range errs {
				if err == nil {
					continue
				}
				t.Logf("rank %d: %v", r, err)
				if strings.Contains(err.Error(), "rank 3's peer record") || strings.Contains(err.Error(), "the forger is") && !strings.Contains(err.Error(), "the forger is inter ring predecessor (leader) rank 4") {
					t.Errorf("rank %d blames another rank than the forging relay rank 4: %v", r, err)
				}
				named = named || strings.Contains(err.Error(), "the forger is inter ring predecessor (leader) rank 4")
			}
			if !named {
				t.Errorf("no rank names rank 4 as the forger: %v", errs)
			}
		})
	}
}
