package launch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/proc"
)

// When the launcher's context ends, every rank's process group is killed
// (here a grandchild holds the rank's stdout, so only a group kill returns
// before proc.WaitDelay) and the launcher reports the ranks as failed
// instead of waiting for them to be ready.
func TestRunLocalEndsWithContext(t *testing.T) {
	// The context ends once both ranks are running, not on a fixed clock: on
	// a loaded machine a fixed deadline can fall before a rank has started,
	// which tests the start-up path instead of the group kill.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	var cancelled time.Time
	go func() {
		for ctx.Err() == nil {
			if ents, _ := os.ReadDir(dir); len(ents) == 2 {
				cancelled = time.Now()
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var out, errw bytes.Buffer
	o := Options{Local: 2, Timing: true, ReorderRank: -1, SkewRank: -1, FaultRank: -1,
		RankCmd: []string{"sh", "-c", "touch '" + dir + "'/$$; sleep 30 & wait", "rank"}}
	err := RunLocal(ctx, o, &out, &errw)
	if cancelled.IsZero() {
		t.Fatalf("RunLocal returned before both ranks ran: %v\n%s%s", err, out.String(), errw.String())
	}
	// Without the group kill the grandchild holds stdout until proc.WaitDelay.
	if took := time.Since(cancelled); took > proc.WaitDelay*3/4 {
		t.Errorf("RunLocal took %s after the cancel", took)
	}
	if !errors.Is(err, ErrFailed) || !strings.Contains(out.String(), "2 of 2 ranks exited non-zero") || !strings.Contains(out.String(), "ended by signal: killed") {
		t.Errorf("got %v\n%s", err, out.String())
	}
}

// TestOneProcPerRank: GOMAXPROCS=1 only when the ranks outnumber the cores,
// and never over the caller's own setting.
func TestOneProcPerRank(t *testing.T) {
	has := func(env []string, kv string) bool {
		for _, e := range env {
			if e == kv {
				return true
			}
		}
		return false
	}
	if got := oneProcPerRank([]string{"A=1"}, 64, 2); !has(got, "GOMAXPROCS=1") {
		t.Errorf("64 ranks on 2 cores: %q, want GOMAXPROCS=1", got)
	}
	if got := oneProcPerRank([]string{"A=1"}, 2, 2); has(got, "GOMAXPROCS=1") {
		t.Errorf("2 ranks on 2 cores: %q, want no GOMAXPROCS", got)
	}
	got := oneProcPerRank([]string{"GOMAXPROCS=4"}, 64, 2)
	if has(got, "GOMAXPROCS=1") || !has(got, "GOMAXPROCS=4") {
		t.Errorf("the caller's GOMAXPROCS=4: %q, want it kept alone", got)
	}
}
