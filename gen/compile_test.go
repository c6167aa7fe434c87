package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

func needCC(t *testing.T) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
}

// writeRelease generates s into a temporary directory.
func writeRelease(t *testing.T, s *spec.Spec) string {
	t.Helper()
	files, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compileC compiles a translation unit including the header and the slot
// header, then the slot table and the stub, under -std=c11 -Wall -Wextra -Werror.
func compileC(dir string) error {
	c := filepath.Join(dir, "c")
	tu := "#define _GNU_SOURCE\n#include \"" + HeaderName + "\"\n#include \"" + SlotsHeader + "\"\nint main(void) { return 0; }\n"
	if err := os.WriteFile(filepath.Join(c, "check.c"), []byte(tu), 0o644); err != nil {
		return err
	}
	for _, src := range []string{"check.c", SlotsSource, StubSource} {
		if err := cc.Object(c, src, strings.TrimSuffix(src, ".c")+".o", cc.Strict...); err != nil {
			return err
		}
	}
	return nil
}

// buildGo vets and tests the generated Go package as its own module.
func buildGo(dir string, tags ...string) (string, error) {
	abi := filepath.Join(dir, GoPackage)
	if err := os.WriteFile(filepath.Join(abi, "go.mod"), []byte("module gentest\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	args := []string{"test", "-count=1", "-v"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = abi
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestHeaderCompiles(t *testing.T) {
	needCC(t)
	for _, s := range []*spec.Spec{loadMini(t), loadMiniNext(t), mustLoad(t, spec.Default)} {
		if err := compileC(writeRelease(t, s)); err != nil {
			t.Errorf("release %s: %v", s.Release.Name, err)
		}
	}
}

func mustLoad(t testing.TB, r string) *spec.Spec {
	t.Helper()
	s, err := spec.Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMutationBites moves one field of the canonical spec to another aligned,
// non-overlapping offset — a change the validator accepts — and requires the
// generated C and the generated Go both to refuse to compile, and the Go
// layout test (built without the assertions) to name the field.
func TestMutationBites(t *testing.T) {
	needCC(t)
	if testing.Short() {
		t.Skip("skipping: builds a Go module (-short)")
	}
	src := copySpec(t, spec.Default)
	p := filepath.Join(src, "structs_nrt.toml")
	data, _ := os.ReadFile(p)
	// enc_glb_comm.pod_sz: a u32 at 40 followed by a u64 at 48. Moved to 44 it
	// is aligned and overlaps nothing, but C and Go still put it at 40.
	old := "name = \"pod_sz\"\n  offset = 40\n"
	if !strings.Contains(string(data), old) {
		t.Fatal("fixture: enc_glb_comm.pod_sz at 40 not found")
	}
	os.WriteFile(p, []byte(strings.Replace(string(data), old, "name = \"pod_sz\"\n  offset = 44\n", 1)), 0o644)
	s, err := spec.LoadDir(src)
	if err != nil {
		t.Fatalf("the validator must accept the mutated spec: %v", err)
	}
	dir := writeRelease(t, s)

	err = compileC(dir)
	if err == nil || !strings.Contains(err.Error(), "enc_glb_comm.pod_sz: spec offset 44") {
		t.Errorf("C: want a failed _Static_assert naming enc_glb_comm.pod_sz, got %v", err)
	}
	out, err := buildGo(dir)
	if err == nil || !strings.Contains(out, "unsafe.Offsetof(EncGlbComm{}.PodSz) - 44") {
		t.Errorf("Go: want a compile error on the PodSz assertion, got %v:\n%s", err, out)
	}
	out, err = buildGo(dir, NoAssertTag)
	if err == nil || !strings.Contains(out, "enc_glb_comm") || !strings.Contains(out, "MISMATCH") {
		t.Errorf("Go layout test without assertions: want a MISMATCH row, got %v:\n%s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "MISMATCH") && !(strings.Contains(line, "pod_sz") && strings.Contains(line, "44") && strings.Contains(line, "40")) {
			t.Errorf("unexpected mismatch row: %s", line)
		}
	}
}

// TestGoMirrorsBuild runs the generated layout tests of the unmutated spec.
func TestGoMirrorsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds a Go module (-short)")
	}
	for _, s := range []*spec.Spec{loadMini(t), loadMiniNext(t)} {
		out, err := buildGo(writeRelease(t, s))
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.Release.Name, err, out)
		}
		if !strings.Contains(out, "layout facts hold") || !strings.Contains(out, "TestWireImage") {
			t.Errorf("%s: the generated tests did not run:\n%s", s.Release.Name, out)
		}
	}
}

func copySpec(t *testing.T, release string) string {
	return spectest.CopyRelease(t, spec.Embedded, release)
}
