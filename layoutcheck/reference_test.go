package layoutcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
)

// TestReferenceBuild builds the project's own runtime the way `make libnrt`
// and `make nccom-stubs` do — the Go libnrt.so.1 and the good libnccom double
// linked against it — and checks each file: its side of the link contract,
// and every spec struct its DWARF carries.
func TestReferenceBuild(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if testing.Short() {
		t.Skip("skipping: builds libnrt.so.1 with go build -buildmode=c-shared (-short)")
	}
	tree, err := builder.Open(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lib, err := tree.BuildLibnrt(t.Context(), filepath.Join(dir, "lib"), builder.Versioned)
	if err != nil {
		t.Fatal(err)
	}
	good, err := tree.StubByName(builder.StubGood)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := tree.BuildStub(t.Context(), filepath.Join(dir, "lib"), filepath.Join(dir, "stubs"), good)
	if err != nil {
		t.Fatal(err)
	}
	for _, rb := range []struct{ file, role string }{{lib, specmatch.RoleLibnrt}, {stub, specmatch.RoleLibnccom}} {
		t.Run(rb.role, func(t *testing.T) {
			if _, err := os.Stat(rb.file); err != nil {
				t.Fatal(err)
			}
			r, err := Check(context.Background(), []string{rb.file}, Options{Spec: tree.Spec, Role: rb.role, StructsSrc: "spec/" + spec.Default, DebugDirs: elfread.DefaultDebugDirs})
			if err != nil {
				t.Fatal(err)
			}
			if r.Exit != 0 {
				var b strings.Builder
				r.WriteText(&b)
				t.Fatalf("%s is not clean:\n%s", rb.file, b.String())
			}
			for _, p := range countProblems(r, rb.role == specmatch.RoleLibnrt) {
				t.Errorf("%s: %s", rb.file, p)
			}
		})
	}
}

// countProblems holds a clean report of one reference library to what its
// verdict may claim: with wantSome, some spec struct was found and checked;
// neither library's DWARF holds every spec struct, so some are absent and the
// verdict counts what it checked, never claiming all of them.
func countProblems(r *Report, wantSome bool) []string {
	var out []string
	if wantSome && r.StructsChecked == 0 {
		out = append(out, "no spec struct found in its DWARF")
	}
	if r.StructsChecked+len(r.Absent) != r.StructsInSpec || len(r.Absent) == 0 {
		out = append(out, fmt.Sprintf("%d checked + %d absent, %d in the spec: some must be absent and the three must add up", r.StructsChecked, len(r.Absent), r.StructsInSpec))
	}
	want := fmt.Sprintf("CLEAN: %d of %d spec structs found and checked (%d absent)", r.StructsChecked, r.StructsInSpec, len(r.Absent))
	if !strings.HasPrefix(r.Verdict, want) {
		out = append(out, fmt.Sprintf("verdict %q, want it to begin %q", r.Verdict, want))
	}
	return out
}

// TestReferenceCountsCatchPlanted: the reference build's counting checks
// fail on the two faults they guard against: a library whose DWARF holds no
// spec struct, and a verdict that claims every spec struct.
func TestReferenceCountsCatchPlanted(t *testing.T) {
	f := loadFixtures(t)
	// No spec struct in the DWARF: an object of one int.
	dir := t.TempDir()
	if err := writeFile(dir, "none.c", "int nothing_here;\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libnone.so", "libnone.so", "", []string{"none.c"}); err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{Role: specmatch.RoleNone, AllowEmpty: true}, filepath.Join(dir, "libnone.so"))
	if ps := countProblems(r, true); len(ps) == 0 || !strings.Contains(ps[0], "no spec struct found") {
		t.Errorf("a library without spec structs passed: %v (checked %d)", ps, r.StructsChecked)
	}
	// Every spec struct found: the verdict says all, which no reference
	// library can honestly say.
	r = runCheck(t, f, Options{Role: specmatch.RoleNone}, f.typesObj)
	if r.StructsChecked != r.StructsInSpec || len(r.Absent) != 0 {
		t.Fatalf("the types object: %d of %d checked, absent %v", r.StructsChecked, r.StructsInSpec, r.Absent)
	}
	if ps := countProblems(r, true); len(ps) == 0 {
		t.Errorf("a report claiming all %d structs passed the reference counts", r.StructsInSpec)
	}
	// A report whose counts do not add up.
	r.StructsChecked--
	if ps := countProblems(r, false); len(ps) == 0 {
		t.Error("counts that do not add up passed")
	}
}
