package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// TestHeldCWorld: C hosts launched held (worldprog.LaunchHeld, the bench's C
// rows) agree as they do unheld, each host's libnrt holding its agreed world
// until the launcher has every host's word; a hold value libnrt does not
// know fails every host, naming the variable.
func TestHeldCWorld(t *testing.T) {
	requireWorld(t)
	env := []string{"LD_LIBRARY_PATH=" + libnrtDir() + ":" + refLibDir("ref")}
	ms := make([]worldprog.Member, 4)
	for r := range ms {
		ms[r] = worldprog.WorldHost(worldHostPath(), false, env...)
	}
	base := []string{abi.EnvSockTimeout + "=" + strconv.Itoa(worldTimeout), "NRTABI_LOG_LEVEL=warn", abi.EnvBootstrapPerInstance + "=2"}
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	runs, _, err := worldprog.LaunchHeld(t.Context(), ms, root, base)
	if err != nil {
		t.Fatal(err)
	}
	agree(t, runs)

	if root, err = worldprog.FreeLoopbackRoot(); err != nil {
		t.Fatal(err)
	}
	runs, _, err = worldprog.Launch(t.Context(), ms, root, append(base, worldprog.EnvHold+"=yes"))
	if err != nil {
		t.Fatal(err)
	}
	for r, run := range runs {
		if run.Exit == 0 || !strings.Contains(run.Stderr, worldprog.EnvHold+"=yes: set it to 1") {
			t.Errorf("host %d with %s=yes: exit %d: %s\n%s", r, worldprog.EnvHold, run.Exit, run.Fields["line"], run.Stderr)
		}
	}
}
