//go:build nrtabi_faults

package launch

import (
	"strings"
	"testing"
)

// The test build carries every fault the bootstrap tests plant, and refuses
// a name it does not know.
func TestFaultHooksInTestBuilds(t *testing.T) {
	for _, k := range []string{"bad-magic", "truncated-record", "die-mid-record", "die-after-record", "die-after-reply", "die-mid-gather", "stall-mid-gather", "forge-relay", "wrong-instance", "deaf-after-gather", "die-after-p2p-send", "die-at-step-6"} {
		if h, err := faultHooks(k); h == nil || err != nil {
			t.Errorf("%s: hooks %v, error %v", k, h, err)
		}
	}
	if h, err := faultHooks("stall-before-root"); h != nil || err != nil || !stallBeforeRoot("stall-before-root") {
		t.Errorf("stall-before-root: hooks %v, error %v", h, err)
	}
	if _, err := faultHooks("explode"); err == nil || !strings.Contains(err.Error(), "use bad-magic") {
		t.Errorf("explode: %v", err)
	}
	for _, k := range []string{"die-at-step-", "die-at-step--1", "die-at-step-x"} {
		if _, err := faultHooks(k); err == nil || !strings.Contains(err.Error(), "takes a step number") {
			t.Errorf("%s: %v", k, err)
		}
	}
}
