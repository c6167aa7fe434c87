package layoutcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"

	"github.com/nrtabi/nrtabi/layoutcheck/elfread"

	"github.com/nrtabi/nrtabi/internal/cc"
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
	lib, err := tree.BuildLibnrt(filepath.Join(dir, "lib"), builder.Versioned)
	if err != nil {
		t.Fatal(err)
	}
	good, err := tree.StubByName(builder.StubGood)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := tree.BuildStub(filepath.Join(dir, "lib"), filepath.Join(dir, "stubs"), good)
	if err != nil {
		t.Fatal(err)
	}
	for _, rb := range []struct{ file, role string }{{lib, specmatch.RoleLibnrt}, {stub, specmatch.RoleLibnccom}} {
		t.Run(rb.role, func(t *testing.T) {
			if _, err := os.Stat(rb.file); err != nil {
				t.Fatal(err)
			}
			r, err := Check([]string{rb.file}, Options{Spec: tree.Spec, Role: rb.role, StructsSrc: "spec/" + spec.Default, DebugDirs: elfread.DefaultDebugDirs})
			if err != nil {
				t.Fatal(err)
			}
			if r.Exit != 0 {
				var b strings.Builder
				r.WriteText(&b)
				t.Fatalf("%s is not clean:\n%s", rb.file, b.String())
			}
			if r.StructsSeen == 0 && rb.role == specmatch.RoleLibnrt {
				t.Errorf("no spec struct found in the DWARF of %s", rb.file)
			}
			// Neither library's DWARF holds every spec struct: the clean
			// verdict must count what it checked, never claim all of them.
			if r.StructsSeen+len(r.Absent) != r.StructsInSpec || len(r.Absent) == 0 {
				t.Errorf("%s: %d found + %d absent != %d in the spec", rb.file, r.StructsSeen, len(r.Absent), r.StructsInSpec)
			}
			want := fmt.Sprintf("CLEAN: %d of %d spec structs found and checked (%d absent)", r.StructsSeen, r.StructsInSpec, len(r.Absent))
			if !strings.HasPrefix(r.Verdict, want) {
				t.Errorf("%s: verdict %q, want it to begin %q", rb.file, r.Verdict, want)
			}
		})
	}
}
