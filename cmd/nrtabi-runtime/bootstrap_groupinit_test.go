package main

import (
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/collectives"
)

// TestBootstrapGroupInitHier: NRTABI_BOOTSTRAP_GROUP_INIT=hier
// (docs/bootstrap.md#group-comm-init) as processes: a world of 10 = 4+4+2
// agrees with its group comms on the 2-tier path, as the same world does on
// the seed's flat one; a value that is neither flat nor hier is refused by
// name and the world fails. Cost: three 10-process worlds, a few seconds.
func TestBootstrapGroupInitHier(t *testing.T) {
	for _, v := range []string{"hier", "flat"} {
		res := nrtabi(t, []string{collectives.EnvGroupInit + "=" + v}, "bootstrap", "--local", "10", "--per-instance", "4")
		checkHierWorld(t, res, 10, 4)
	}
	res := nrtabi(t, []string{collectives.EnvGroupInit + "=tree"}, "bootstrap", "--local", "10", "--per-instance", "4", "-v")
	if res.exit == 0 || !strings.Contains(res.stderr, collectives.EnvGroupInit+`=\"tree\"`) && !strings.Contains(res.stderr, collectives.EnvGroupInit+`="tree"`) {
		t.Errorf("%s=tree: exit %d\n%s\n%s", collectives.EnvGroupInit, res.exit, res.stdout, res.stderr)
	}
}
