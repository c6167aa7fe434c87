package worldprog

import (
	"testing"
	"time"
)

// TestUsageInTheLine: a timed report carries the four u_* fields, which
// ParseUsage reads back as taken (to the microsecond); a malformed field is
// refused, never read as a zero usage.
func TestUsageInTheLine(t *testing.T) {
	r := NewReport(3, 8)
	r.TStart, r.UStart = time.Now(), SelfUsage()
	for x := 0; SelfUsage().CPU == r.UStart.CPU && x < 1e9; x++ {
	}
	r.TBoot, r.UBoot = time.Now(), SelfUsage()
	r.TAgree, r.UAgree = r.TBoot, r.UBoot
	r.TDone, r.UDone = time.Now(), SelfUsage()
	f := ParseLine(r.Line(true))
	for k, want := range map[string]Usage{"u_start": r.UStart, "u_boot": r.UBoot, "u_agree": r.UAgree, "u_done": r.UDone} {
		got, ok := ParseUsage(f[k])
		want.CPU = want.CPU.Truncate(time.Microsecond)
		if !ok || got != want {
			t.Errorf("%s=%q read back as %+v, %v; want %+v", k, f[k], got, ok, want)
		}
	}
	if r.UBoot.CPU <= r.UStart.CPU {
		t.Errorf("CPU did not advance: %v then %v", r.UStart.CPU, r.UBoot.CPU)
	}
	if _, ok := f["u_start"]; !ok {
		t.Fatal("no u_start in a timed line")
	}
	if f := ParseLine(r.Line(false)); f["u_start"] != "" {
		t.Errorf("an untimed line carries u_start=%q", f["u_start"])
	}
	for _, bad := range []string{"", "1/2", "1/2/3/4", "-1/2/3", "a/2/3", "1//3"} {
		if u, ok := ParseUsage(bad); ok {
			t.Errorf("ParseUsage(%q) = %+v, accepted", bad, u)
		}
	}
}
