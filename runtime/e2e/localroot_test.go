package e2e

import (
	"strings"
	"testing"
)

// TestGlobalInitLocalRootIsNotGlobal: neuronInitGlobalComm without a root
// comm id gets its unique id from ncclGetUniqueId, whose root
// (bootstrapGetUniqueId's) is created with isGlobalInit = 0
// (docs/sources.md#s001-5), not with the caller's global flag. One rank of
// such a world forms it through the reference libnccom, and the root says
// which flag it was given; its global rank's tagged extInfo is served.
func TestGlobalInitLocalRootIsNotGlobal(t *testing.T) {
	requirePeerHost(t)
	c := startRank(t, 0, 1, "", "idle", 0, "NRTABI_LOG_LEVEL=info")
	<-c.done
	var out []string
	for l := range c.lines {
		out = append(out, l)
	}
	log := c.stderr.String()
	if c.err != nil || !strings.Contains(strings.Join(out, "\n"), "status 0") {
		t.Fatalf("a one-rank global init without a root comm id failed: %v\nstdout: %q\n%s", c.err, out, log)
	}
	if !strings.Contains(log, "ranks, isGlobalInit=0, flat") || strings.Contains(log, "isGlobalInit=1") {
		t.Fatalf("the root bootstrapGetUniqueId creates is not isGlobalInit = 0:\n%s", log)
	}
}
