package release

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/spec"
)

// TestObserveInterruptedFetch: a file without DWARF is read for its
// symbols only, but one whose debug file was still being fetched when the
// command's context ended is an error, not a release without its structs.
func TestObserveInterruptedFetch(t *testing.T) {
	if _, err := exec.LookPath("objcopy"); err != nil {
		t.Skip("objcopy not found: install binutils")
	}
	base := mustSpec(t, spec.Default)
	plugin := buildTestPlugin(t, "libnccom-net.so")
	stripped := filepath.Join(t.TempDir(), "libnccom-net.so")
	if out, err := exec.Command("objcopy", "--strip-debug", plugin, stripped).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	hang := func(ctx context.Context, id string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	obs, err := Observe(ctx, []string{stripped}, base, ObserveOptions{DebugDirs: []string{t.TempDir()}, Fetch: hang})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an interrupted fetch must fail the read naming it; got %v (observed %v)", err, obs != nil)
	}
	// Planted the other way: with no fetch to wait on, the same file is
	// read for its symbols only, so the error above came from the fetch.
	if _, err := Observe(context.Background(), []string{stripped}, base, ObserveOptions{DebugDirs: []string{t.TempDir()}}); err != nil {
		t.Fatalf("the stripped plugin without a fetch: %v", err)
	}
}
