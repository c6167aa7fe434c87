//go:build !nrtabi_faults

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cli"
)

// This test binary is a normal build (no -tags nrtabi_faults): --fault-rank
// is refused by name, in process, before a rank is spawned, instead of
// running a world with nothing planted that exits 0.
func TestFaultRankRefusedWithoutHooks(t *testing.T) {
	var out, errw bytes.Buffer
	rc := run([]string{"bootstrap", "--local", "4", "--fault-rank", "1"}, &out, &errw)
	if rc != cli.ExitUsage || !strings.Contains(errw.String(), "--fault-rank 1: this binary has no fault hooks (they are test-only): build it with -tags nrtabi_faults") || out.Len() != 0 {
		t.Errorf("exit %d\n%s%s", rc, out.String(), errw.String())
	}
}
