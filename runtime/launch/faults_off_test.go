//go:build !nrtabi_faults

package launch

import (
	"strings"
	"testing"
)

// A normal build has no fault hooks: the environment cannot make a
// production rank misbehave, and asking for one says how to get them.
func TestFaultHooksAbsentFromNormalBuilds(t *testing.T) {
	if h, err := faultHooks(""); h != nil || err != nil {
		t.Fatalf("no fault asked: %v %v", h, err)
	}
	h, err := faultHooks("bad-magic")
	if h != nil || err == nil || !strings.Contains(err.Error(), "-tags nrtabi_faults") {
		t.Fatalf("bad-magic in a normal build: hooks %v, error %v", h, err)
	}
	if _, err := faultHooks("stall-before-root"); err == nil || stallBeforeRoot("stall-before-root") {
		t.Fatalf("stall-before-root in a normal build: %v", err)
	}
}
