package tcp

import (
	"fmt"
	"testing"
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
