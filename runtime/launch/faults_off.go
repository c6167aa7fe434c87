//go:build !nrtabi_faults

package launch

import (
	"fmt"

	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// FaultHooks reports whether this build carries the test-only fault hooks.
const FaultHooks = false

// faultHooks refuses NRTABI_BOOTSTRAP_FAULT: the hooks are compiled only
// into test builds (-tags nrtabi_faults), so a production rank cannot be
// made to misbehave by its environment.
func faultHooks(kind string) (*tcp.Hooks, error) {
	if kind == "" {
		return nil, nil
	}
	return nil, fmt.Errorf("%s=%q: this binary has no fault hooks (they are test-only: build with -tags nrtabi_faults)", EnvFault, kind)
}

// stallBeforeRoot is false: a normal build has no faults.
func stallBeforeRoot(string) bool { return false }
