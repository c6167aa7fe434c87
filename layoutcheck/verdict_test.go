package layoutcheck

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// claimsAll reports whether a verdict says every struct was found.
func claimsAll(v string) bool {
	return strings.Contains(v, "every struct") || strings.Contains(v, "all ") && strings.Contains(v, "spec structs found")
}

// TestVerdictNeverClaimsAbsentStructs: no input gets a verdict saying every
// struct was found while a spec struct was absent — real inputs holding all,
// some and none of the structs, and every count of found structs.
func TestVerdictNeverClaimsAbsentStructs(t *testing.T) {
	f := loadFixtures(t)
	stripped := t.TempDir() + "/libnccom.so.2"
	objcopy(t, "--strip-debug", f.libnccom, stripped)
	inputs := [][]string{{f.typesObj}, {f.libnrt}, {f.libnccom}, {f.libnrt, f.libnccom}}
	for _, in := range inputs {
		r := runCheck(t, f, Options{Role: "auto"}, in...)
		if len(r.Absent) > 0 && claimsAll(r.Verdict) {
			t.Fatalf("%v: %d absent, verdict %q", in, len(r.Absent), r.Verdict)
		}
		if len(r.Absent) == 0 && !claimsAll(r.Verdict) && r.Exit == 0 {
			t.Fatalf("%v: nothing absent, verdict %q does not say so", in, r.Verdict)
		}
		want := fmt.Sprintf("%d of %d", r.StructsChecked, r.StructsInSpec)
		if len(r.Absent) > 0 && r.Exit == 0 && !strings.Contains(r.Verdict, want) {
			t.Fatalf("%v: verdict %q does not say %q", in, r.Verdict, want)
		}
	}
	if _, err := Check(context.Background(), []string{stripped}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}}); err == nil {
		t.Fatal("a stripped input with no debug file anywhere must be an input error, not a verdict")
	}
	for seen := 0; seen <= 5; seen++ {
		for _, skipped := range []int{0, 1} {
			r := &Report{StructsInSpec: 5, StructsChecked: seen, Files: []*FileReport{{}}}
			for i := seen; i < 5; i++ {
				r.Absent = append(r.Absent, fmt.Sprint("s", i))
			}
			if skipped > 0 {
				r.Files[0].DWARFMissing = []string{"needs x.dwo"}
			}
			v := r.coverage()
			if (seen < 5) == claimsAll(v) {
				t.Fatalf("%d of 5 found: %q", seen, v)
			}
			if skipped > 0 && !strings.Contains(v, "not read") {
				t.Fatalf("a skipped debug file is not named: %q", v)
			}
		}
	}
}
