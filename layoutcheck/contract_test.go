package layoutcheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

func TestLibnrtUnversionedCallback(t *testing.T) {
	f := loadFixtures(t)
	// nec_ndl_printk left out of every node, and no "local: *": ld exports
	// it at the base version.
	m, err := os.ReadFile(filepath.Join(f.dir, "libnrt.map"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(m), "\n") {
		tl := strings.TrimSpace(line)
		if strings.HasPrefix(tl, "nec_ndl_printk;") || tl == "local:" || tl == "*;" {
			continue
		}
		kept = append(kept, line)
	}
	if err := writeFile(f.dir, "unversioned.map", strings.Join(kept, "\n")); err != nil {
		t.Fatal(err)
	}
	lib, err := f.buildLibnrt("unversioned", "unversioned.map", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{}, lib)
	expect(t, r, KindUnversioned, Incompatible, "nec_ndl_printk is exported unversioned (base version)")
}

func TestLibnrtNeedsLibnccom(t *testing.T) {
	f := loadFixtures(t)
	dir := filepath.Join(f.dir, "fake-nccom")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, "fake.c", "int fake_nccom_marker;\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libnccom.so.2", "libnccom.so.2", "", []string{"fake.c"}); err != nil {
		t.Fatal(err)
	}
	lib, err := f.buildLibnrt("needs-nccom", "libnrt.map", nil, "-Wl,--no-as-needed", "-L"+dir, "-l:libnccom.so.2")
	if err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{}, lib)
	expect(t, r, KindNeeded, Incompatible, "DT_NEEDED libnccom.so.2: libnrt must not link libnccom")
}

func TestLibnrtExportsNeuron(t *testing.T) {
	f := loadFixtures(t)
	m, err := os.ReadFile(filepath.Join(f.dir, "libnrt.map"))
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(string(m), "  local:", "    neuronGetUniqueId;\n  local:", 1)
	if err := writeFile(f.dir, "neuron.map", script); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(f.dir, "neuron.c", "void neuronGetUniqueId(void) {}\n"); err != nil {
		t.Fatal(err)
	}
	lib, err := f.buildLibnrt("exports-neuron", "neuron.map", []string{filepath.Join(f.dir, "neuron.c")})
	if err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{}, lib)
	expect(t, r, KindForbidden, Incompatible, "libnrt's dynamic table defines neuronGetUniqueId")
}

func TestLibnccomMissingExport(t *testing.T) {
	f := loadFixtures(t)
	lib, err := f.buildLibnccom("nccom-omit", f.libnrtDir, []string{"-DNCCOM_STUB_OMIT_neuronGetUniqueId"})
	if err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{}, lib)
	expect(t, r, KindExport, Incompatible, "neuronGetUniqueId is not exported; libnrt's dlsym #1 fails")
}

func TestLibnccomExtraNRT3Need(t *testing.T) {
	f := loadFixtures(t)
	// A libnrt exporting one NRT_3.0.0 function, and a libnccom that calls it.
	script, err := gen.LibnrtVersionScript(f.sp, map[string][]string{"NRT_3.0.0": {"nrta_probe"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(f.dir, "nrt3.map", string(script)); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(f.dir, "nrta.c", "void nrta_probe(void) {}\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.buildLibnrt("nrt3", "nrt3.map", []string{filepath.Join(f.dir, "nrta.c")}); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(f.dir, "uses_nrta.c", "void nrta_probe(void);\nvoid nccom_uses_async(void) { nrta_probe(); }\n"); err != nil {
		t.Fatal(err)
	}
	lib, err := f.buildLibnccom("nccom-nrt3", filepath.Join(f.dir, "nrt3"), nil, filepath.Join(f.dir, "uses_nrta.c"))
	if err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{}, lib)
	expect(t, r, KindVersionNeed, Incompatible, "needs NRT_3.0.0 from libnrt.so.1; the spec allows only NRT_2.0.0")
}

func TestLibnccomUnversionedImport(t *testing.T) {
	f := loadFixtures(t)
	// Linked against a libnrt without version information: the imports
	// carry no version and no need is recorded.
	lib, err := f.buildLibnrt("noversions", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	nccom, err := f.buildLibnccom("nccom-unversioned", filepath.Dir(lib), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{}, lib, nccom)
	expect(t, r, KindVerdef, Incompatible, "no version definitions (.gnu.version_d)")
	expect(t, r, KindUnversioned, Incompatible, "nec_inc_semaphore is imported unversioned; it must bind nec_inc_semaphore@NRT_2.0.0")
	expect(t, r, KindVersionNeed, Incompatible, "no version need (libnrt.so.1, NRT_2.0.0)")
}

func TestRoleOverride(t *testing.T) {
	f := loadFixtures(t)
	// Checked as a libnrt, the stub libnccom breaks every libnrt rule.
	r := runCheck(t, f, Options{Role: specmatch.RoleLibnrt}, f.libnccom)
	expect(t, r, KindSONAME, Incompatible, `SONAME is "libnccom.so.2"`)
	expect(t, r, KindForbidden, Incompatible, "libnrt's dynamic table defines neuronGetVersionInfo")
	if r.Files[0].RoleFrom != "--role" {
		t.Fatalf("role from %q", r.Files[0].RoleFrom)
	}
	// A relocatable object has no dynamic table to check.
	_, err := Check(context.Background(), []string{f.typesObj}, Options{Spec: f.sp, Role: specmatch.RoleLibnrt})
	if ie, ok := err.(*elfread.InputError); !ok || !strings.Contains(ie.Msg, "without a dynamic symbol table") {
		t.Fatalf("want an input error about the missing dynamic table, got %v", err)
	}
}

func TestAddresses(t *testing.T) {
	f := loadFixtures(t)
	r := runCheck(t, f, Options{Addresses: true}, f.libnrt, f.libnccom)
	// The fixtures are not the release binaries: every definer differs.
	expect(t, r, KindAddress, Compatible, "definer nec_inc_semaphore at")
	expect(t, r, KindAddress, Compatible, "definer neuronGetVersionInfo at")
	if r.Exit&int(Incompatible) != 0 {
		t.Fatalf("address differences alone must not be incompatible (exit %d)", r.Exit)
	}
}
