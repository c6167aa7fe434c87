package vendorbuild

import (
	"errors"
	"testing"
)

// TestRealBuild builds (or reuses) the plugin from the vendor tarballs and
// checks what the cache holds: a whole entry, reused on the second call.
func TestRealBuild(t *testing.T) {
	b, err := Get(t.Context(), Options{})
	var absent *Absent
	if errors.As(err, &absent) {
		t.Skipf("skipped: %v; the worlds run against the plugin double only", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plugin %s (cached %v, %s)", b.Plugin, b.Cached, b.Took)
	again, err := Get(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.Plugin != b.Plugin {
		t.Errorf("the second Get built again (cached %v) or elsewhere (%s, first %s)", again.Cached, again.Plugin, b.Plugin)
	}
}
