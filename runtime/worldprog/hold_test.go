package worldprog

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A rank's two holds: the start line releases Start (and only "go" does),
// the end of input releases End; an end of input before any line releases
// both; End is bounded.
func TestHold(t *testing.T) {
	ctx := t.Context()
	r, w := io.Pipe()
	h := NewHold(r)
	select {
	case <-h.started:
		t.Fatal("released before the start line")
	case <-time.After(20 * time.Millisecond):
	}
	go func() { _, _ = io.WriteString(w, HoldGo+"\n") }()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.End(ctx, 30*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not release") {
		t.Fatalf("End before the pipe closed: %v", err)
	}
	w.Close()
	if err := h.End(ctx, time.Second); err != nil {
		t.Fatal(err)
	}

	if err := NewHold(strings.NewReader("")).Start(ctx); err != nil {
		t.Errorf("end of input before a line: %v", err)
	}
	for _, bad := range []string{"stop\n", "go", strings.Repeat("g", 200) + "\n", "go\x1b[2J\n"} {
		err := NewHold(strings.NewReader(bad)).Start(ctx)
		if err == nil || !strings.Contains(err.Error(), "start line") || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	pr, _ := io.Pipe()
	if err := NewHold(pr).Start(cctx); err == nil {
		t.Error("Start ignored its context")
	}
}

// LaunchHeld keeps every member up until the last has said it agreed:
// member 1 says so 0.4 s after member 0, and member 0 must not end first.
// The plant, a launcher that releases at once, lets it.
func TestLaunchHeld(t *testing.T) {
	for _, plant := range []bool{false, true} {
		dir := t.TempDir()
		script := `[ "$` + EnvHold + `" = 1 ] || exit 3; r=$1
if [ "$r" = 1 ]; then sleep 0.4; fi
date +%s%N > "` + dir + `/agreed.$r"; echo ` + AgreedLine + `
cat >/dev/null; date +%s%N > "` + dir + `/end.$r"; echo "rank=$r nranks=2"`
		m := Member{Cmd: []string{"sh", "-c", script, "member"}, Args: func(rank, _ int, _ string) []string { return []string{strconv.Itoa(rank)} }}
		plantHeldEarly = plant
		runs, _, err := LaunchHeld(t.Context(), []Member{m, m}, "127.0.0.1:1", nil)
		plantHeldEarly = false
		if err != nil {
			t.Fatal(err)
		}
		for r, run := range runs {
			if run.Exit != 0 || run.Fields["line"] != "rank="+strconv.Itoa(r)+" nranks=2" {
				t.Fatalf("plant=%v: member %d: exit %d, line %q, stderr %q", plant, r, run.Exit, run.Fields["line"], run.Stderr)
			}
		}
		stamp := func(name string) int64 {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			return v
		}
		if early := stamp("end.0") < stamp("agreed.1"); early != plant {
			t.Errorf("plant=%v: member 0 ended %.3f s after member 1 agreed", plant, float64(stamp("end.0")-stamp("agreed.1"))/1e9)
		}
	}
}
