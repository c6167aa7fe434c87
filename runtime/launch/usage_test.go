package launch

import (
	"strings"
	"testing"
)

// TestUsageSums: the timing line sums each phase's CPU and voluntary
// switches over the world; a world where one rank reported no usage, or a
// malformed one, gets no sums at all rather than a sum of part of it.
func TestUsageSums(t *testing.T) {
	rank := func(s, b, a, d string) *localRank {
		return &localRank{fields: map[string]string{"u_start": s, "u_boot": b, "u_agree": a, "u_done": d}}
	}
	ranks := []*localRank{rank("1000/10/1", "3000/15/1", "4000/19/2", "4500/20/2"), rank("0/0/0", "1000/5/0", "1500/6/0", "1500/6/0")}
	got := usageSums(ranks)
	want := " cpu_boot_ms=3.0 cpu_agree_ms=1.5 cpu_done_ms=0.5 vcsw_boot=10 vcsw_agree=5 vcsw_done=1"
	if got != want {
		t.Errorf("usageSums = %q, want %q", got, want)
	}
	for _, bad := range []*localRank{{fields: map[string]string{}}, rank("1/2/3", "x", "1/2/3", "1/2/3")} {
		if got := usageSums(append(ranks, bad)); got != "" {
			t.Errorf("a rank with fields %v: sums %q, want none", bad.fields, got)
		}
	}
	if line := timingLine(ranks); !strings.Contains(line, "cpu_boot_ms=3.0") {
		t.Errorf("timingLine %q carries no sums", line)
	}
}
