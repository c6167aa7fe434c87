package launch

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// When the launcher's context ends, every rank's process group is killed
// (here a grandchild holds the rank's stdout, so only a group kill returns
// before proc.WaitDelay) and the launcher reports the ranks as failed
// instead of waiting for them to be ready.
func TestRunLocalEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	var out, errw bytes.Buffer
	o := Options{Local: 2, Timing: true, ReorderRank: -1, SkewRank: -1, FaultRank: -1,
		RankCmd: []string{"sh", "-c", "sleep 30 & wait", "rank"}}
	start := time.Now()
	err := RunLocal(ctx, o, &out, &errw)
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("RunLocal took %s after a 300ms deadline", took)
	}
	if !errors.Is(err, ErrFailed) || !strings.Contains(out.String(), "2 of 2 ranks exited non-zero") || !strings.Contains(out.String(), "ended by signal: killed") {
		t.Errorf("got %v\n%s", err, out.String())
	}
}
