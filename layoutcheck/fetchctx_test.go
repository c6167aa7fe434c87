package layoutcheck

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/readers/inputs"
)

// TestFetchHonoursContext: the command's context reaches the debug lookup's
// fetch hook (debuginfod, docs/nrtabi-check.md), so an interrupt ends a
// check or show that waits on a server at once, not after the server's own
// timeout. The hook here waits for nothing but its context; before the
// context was passed through, check waited on it for ever.
func TestFetchHonoursContext(t *testing.T) {
	f := loadFixtures(t)
	needTool(t, "objcopy", "binutils")
	lib := typesLib(t, f.dir, t.TempDir(), "liba.so", "a_fn")
	stripped := filepath.Join(t.TempDir(), "liba.so")
	objcopy(t, "--strip-debug", lib, stripped)
	asked := 0
	hang := func(ctx context.Context, id string) (string, error) {
		asked++
		<-ctx.Done()
		return "", ctx.Err()
	}
	// A dwz'd library whose supplement only a server could give.
	_, dwzd, common := dwzPair(t, f.dir)
	if err := os.Remove(common); err != nil {
		t.Fatal(err)
	}
	runs := map[string]func(ctx context.Context) error{
		// Nor is an interrupted fetch of a dwz supplement a missing one.
		"check of a dwz'd library allowing missing debug": func(ctx context.Context) error {
			_, err := Check(ctx, []string{dwzd}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}, Fetch: hang, AllowMissingDebug: true})
			return err
		},
		"check": func(ctx context.Context) error {
			_, err := Check(ctx, []string{stripped}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}, Fetch: hang})
			return err
		},
		// An interrupted fetch is not a missing debug file: with
		// --allow-missing-debug it must still fail, not pass unread.
		"check allowing missing debug": func(ctx context.Context) error {
			_, err := Check(ctx, []string{stripped}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}, Fetch: hang, AllowMissingDebug: true})
			return err
		},
		"show": func(ctx context.Context) error {
			_, err := Show(ctx, stripped, "nec_version_info_t", ShowOptions{DebugDirs: []string{t.TempDir()}, Fetch: hang}, io.Discard)
			return err
		},
		"show many": func(ctx context.Context) error {
			_, err := ShowMany(ctx, []inputs.Input{{Name: stripped, Path: stripped}}, "nec_version_info_t", ShowOptions{DebugDirs: []string{t.TempDir()}, Fetch: hang}, 2)
			return err
		},
	}
	for name, run := range runs {
		asked = 0
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- run(ctx) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: an ended context must end the fetch with its error; got %v", name, err)
			}
			if asked != 1 {
				t.Errorf("%s: the fetch hook was asked %d times, want 1", name, asked)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still waiting on the fetch 20 s after its context ended", name)
		}
		cancel()
	}
}
