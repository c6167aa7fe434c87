package layoutcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
)

// The debug info forms distributions ship: dwz supplementary files
// (dwz -m) and split DWARF (-gsplit-dwarf, .dwo and .dwp). Every fixture is
// built here by gcc, dwz and dwp from the generated header, so the spec's
// structs are planted in it; each must be found and checked, and a missing
// file must fail the run naming it.

func needTool(t *testing.T, tool, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("skipping: %s not found (install the Debian package %s): %v", tool, pkg, err)
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// typesLib links dir/name from a source that includes the header in incDir
// (every struct kept) and defines fn, compiled with the extra flags.
func typesLib(t *testing.T, incDir, dir, name, fn string, flags ...string) string {
	t.Helper()
	src := strings.TrimSuffix(name, ".so") + ".c"
	if err := writeFile(dir, src, "#define _GNU_SOURCE\n#include \""+gen.HeaderName+"\"\nint "+fn+"(void) { return 1; }\n"); err != nil {
		t.Fatal(err)
	}
	obj := strings.TrimSuffix(name, ".so") + ".o"
	args := append([]string{"-c", "-fPIC", "-g", "-fno-eliminate-unused-debug-types", "-I" + incDir}, flags...)
	if err := cc.Run(dir, append(args, "-o", obj, src)...); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-shared", "-Wl,--build-id", "-o", name, obj); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// dwzPair builds liba.so and libb.so sharing the header's types and moves
// the shared types into dir/common.debug (dwz needs two files for -m).
func dwzPair(t *testing.T, incDir string) (dir, liba, common string) {
	t.Helper()
	needTool(t, "dwz", "dwz")
	dir = t.TempDir()
	liba = typesLib(t, incDir, dir, "liba.so", "a_fn")
	typesLib(t, incDir, dir, "libb.so", "b_fn")
	common = filepath.Join(dir, "common.debug")
	run(t, dir, "dwz", "-m", "common.debug", "-M", common, "liba.so", "libb.so")
	return dir, liba, common
}

// assertAllChecked: every spec struct found, checked and clean, from the
// expected kind of part.
func assertAllChecked(t *testing.T, f *fixtures, r *Report, file, via string) {
	t.Helper()
	fr := r.Files[0]
	if r.Exit != 0 || len(r.Absent) != 0 || len(fr.Structs) != len(f.sp.Structs) || r.StructsSeen != len(f.sp.Structs) {
		t.Fatalf("exit %d, %d of %d structs checked, absent %v; verdict %s", r.Exit, r.StructsSeen, len(f.sp.Structs), r.Absent, r.Verdict)
	}
	for _, s := range fr.Structs {
		if s.DWARFVia != via || s.DWARFFile != file {
			t.Fatalf("%s read from %s via %s; want %s via %s", s.Name, s.DWARFFile, s.DWARFVia, file, via)
		}
	}
	if !strings.HasPrefix(r.Verdict, "CLEAN: all ") {
		t.Fatalf("verdict %q", r.Verdict)
	}
}

func TestDWZSupplement(t *testing.T) {
	f := loadFixtures(t)
	dir, liba, common := dwzPair(t, f.dir)
	o, err := elfread.Open(liba)
	if err != nil {
		t.Fatal(err)
	}
	hasAlt := o.File.Section(".gnu_debugaltlink") != nil || o.File.Section(".debug_sup") != nil
	o.Close()
	if !hasAlt {
		t.Fatalf("dwz left no .gnu_debugaltlink in %s", liba)
	}
	r := runCheck(t, f, Options{}, liba)
	assertAllChecked(t, f, r, common, elfread.ViaSupplement)
	if p := r.Files[0].DWARFParts; len(p) != 1 || p[0].File != common || p[0].Via != elfread.ViaSupplement {
		t.Fatalf("parts %+v", p)
	}

	// The supplement moved under a debug directory's .dwz/, then into its
	// build-id tree: both are found.
	debugDir := t.TempDir()
	sup, err := elfread.Open(common)
	if err != nil {
		t.Fatal(err)
	}
	id := sup.BuildID
	sup.Close()
	if len(id) < 4 {
		t.Fatalf("dwz wrote no build-id into %s", common)
	}
	dwzDir := filepath.Join(debugDir, ".dwz")
	byID := filepath.Join(debugDir, ".build-id", id[:2], id[2:]+".debug")
	for _, d := range []string{dwzDir, filepath.Dir(byID)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	moved := filepath.Join(dwzDir, "common.debug")
	if err := os.Rename(common, moved); err != nil {
		t.Fatal(err)
	}
	r = runCheck(t, f, Options{DebugDirs: []string{debugDir}}, liba)
	assertAllChecked(t, f, r, moved, elfread.ViaSupplement)
	if err := os.Rename(moved, byID); err != nil {
		t.Fatal(err)
	}
	r = runCheck(t, f, Options{DebugDirs: []string{debugDir}}, liba)
	assertAllChecked(t, f, r, byID, elfread.ViaSupplement)

	// Missing: exit 1 (an input error) naming the file and every place.
	if err := os.Remove(byID); err != nil {
		t.Fatal(err)
	}
	_, err = Check([]string{liba}, Options{Spec: f.sp, DebugDirs: []string{debugDir}})
	var ie *elfread.InputError
	if !asInput(err, &ie) {
		t.Fatalf("missing supplement: want an input error, got %v", err)
	}
	for _, want := range []string{"supplementary DWARF file " + common, common, filepath.Join(dwzDir, "common.debug"), byID, "--allow-missing-debug"} {
		if !strings.Contains(ie.Error(), want) {
			t.Fatalf("missing supplement: the error does not name %s:\n%v", want, ie)
		}
	}
	if strings.Contains(ie.Error(), "\n") {
		t.Fatalf("error is not one line: %q", ie)
	}
	t.Logf("missing supplement: %v", ie)

	// A file with another build-id where the supplement should be is refused.
	if err := os.WriteFile(common, mustRead(t, filepath.Join(dir, "libb.so")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Check([]string{liba}, Options{Spec: f.sp, DebugDirs: []string{debugDir}})
	if err == nil || !strings.Contains(err.Error(), common+" (has another build-id") {
		t.Fatalf("a supplement with another build-id must be refused by name; got %v", err)
	}

	// Opting out: the run goes on, and the verdict says what was not read
	// and never that every struct was found.
	r = runCheck(t, f, Options{DebugDirs: []string{debugDir}, AllowMissingDebug: true}, liba)
	if len(r.Files[0].DWARFMissing) != 1 || !strings.Contains(r.Files[0].DWARFMissing[0], common) {
		t.Fatalf("missing parts %v", r.Files[0].DWARFMissing)
	}
	if r.Exit != 0 || strings.Contains(r.Verdict, "all ") || !strings.Contains(r.Verdict, "not read (--allow-missing-debug)") || !strings.Contains(r.Verdict, "0 of ") {
		t.Fatalf("verdict with the supplement skipped: %q (exit %d)", r.Verdict, r.Exit)
	}
}

// TestDWZSupplementFault: a layout fault planted in the types dwz moved is
// caught, so the structs are compared and not only found.
func TestDWZSupplementFault(t *testing.T) {
	f := loadFixtures(t)
	obj := f.faultObject(t, "dwz-shrunk", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	_, liba, common := dwzPair(t, filepath.Dir(obj))
	r := runCheck(t, f, Options{}, liba)
	expect(t, r, KindSize, Incompatible, "nrt_instance_info_t: size 28 B, spec 32 B (struct shrunk)")
	for _, s := range r.Files[0].Structs {
		if s.Name == "nrt_instance_info_t" && s.DWARFFile != common {
			t.Fatalf("the faulty struct was read from %s, not the supplement", s.DWARFFile)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func asInput(err error, ie **elfread.InputError) bool {
	e, ok := err.(*elfread.InputError)
	if ok {
		*ie = e
	}
	return ok
}
