package layoutcheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

func objcopy(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
		t.Fatalf("objcopy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// splitDebug strips the clean libnrt into dir, its DWARF kept in a separate
// .debug file linked by .gnu_debuglink.
func splitDebug(t *testing.T, f *fixtures, dir string) (stripped, debug string) {
	t.Helper()
	if _, err := exec.LookPath("objcopy"); err != nil {
		t.Skipf("skipping: objcopy not found (install binutils): %v", err)
	}
	debug = filepath.Join(dir, "libnrt.so.1.debug")
	stripped = filepath.Join(dir, "libnrt.so.1")
	objcopy(t, "--only-keep-debug", f.libnrt, debug)
	objcopy(t, "--strip-debug", "--add-gnu-debuglink="+debug, f.libnrt, stripped)
	return stripped, debug
}

func TestSeparateDebugViaDebugLink(t *testing.T) {
	f := loadFixtures(t)
	dir := t.TempDir()
	stripped, _ := splitDebug(t, f, dir)
	r := runCheck(t, f, Options{}, stripped)
	fr := r.Files[0]
	if fr.DWARFVia != elfread.ViaDebugLink || fr.DWARFFile != filepath.Join(dir, "libnrt.so.1.debug") {
		t.Fatalf("DWARF from %s via %s; want the .debug file via the debuglink", fr.DWARFFile, fr.DWARFVia)
	}
	if r.Exit != 0 || len(fr.Structs) != len(f.sp.Structs) {
		t.Fatalf("stripped libnrt through its debuglink: exit %d, %d structs", r.Exit, len(fr.Structs))
	}
	// A debug file whose CRC does not match is not used.
	if err := os.WriteFile(filepath.Join(dir, "libnrt.so.1.debug"), []byte("\x7fELF not the right file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Check(context.Background(), []string{stripped}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
	if ie, ok := err.(*elfread.InputError); !ok || !strings.Contains(ie.Msg, "no DWARF anywhere") {
		t.Fatalf("a mismatching debuglink target must not be used; got %v", err)
	}
}

func TestSeparateDebugViaBuildID(t *testing.T) {
	f := loadFixtures(t)
	split := t.TempDir()
	stripped, debug := splitDebug(t, f, split)
	// Move the binary away from its .debug file; only the build-id tree can
	// find it now.
	bin := filepath.Join(t.TempDir(), "libnrt.so.1")
	if err := os.Rename(stripped, bin); err != nil {
		t.Fatal(err)
	}
	obj, err := elfread.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	id := obj.BuildID
	obj.Close()
	if len(id) < 4 {
		t.Fatalf("the fixture has no build-id (%q); gcc links with --build-id on Debian", id)
	}
	debugDir := t.TempDir()
	tree := filepath.Join(debugDir, ".build-id", id[:2])
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(debug, filepath.Join(tree, id[2:]+".debug")); err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{DebugDirs: []string{debugDir}}, bin)
	fr := r.Files[0]
	if fr.DWARFVia != elfread.ViaBuildID {
		t.Fatalf("DWARF via %s from %s; want build-id", fr.DWARFVia, fr.DWARFFile)
	}
	if r.Exit != 0 || len(fr.Structs) != len(f.sp.Structs) {
		t.Fatalf("stripped libnrt through the build-id tree: exit %d, %d structs", r.Exit, len(fr.Structs))
	}
	// Without the debug directory there is no DWARF anywhere: exit 1, one line.
	_, err = Check(context.Background(), []string{bin}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
	ie, ok := err.(*elfread.InputError)
	if !ok || !strings.Contains(ie.Msg, "no DWARF anywhere") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want a one-line no-DWARF input error, got %v", err)
	}
}

// TestDistributionDebugInfo checks glibc types through the build-id path of
// libc.so.6 when Debian's libc6-dbg is installed.
func TestDistributionDebugInfo(t *testing.T) {
	libc := "/lib/x86_64-linux-gnu/libc.so.6"
	obj, err := elfread.Open(libc)
	if err != nil {
		t.Skipf("skipping: %s cannot be read (%v); this test needs an x86-64 Debian system", libc, err)
	}
	id := obj.BuildID
	obj.Close()
	dbg := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
	if _, err := os.Stat(dbg); err != nil {
		t.Skipf("skipping: libc6-dbg is not installed (%s absent); apt-get install libc6-dbg to run it", dbg)
	}
	dir := t.TempDir()
	frag := `
[[struct]]
name = "pthread_mutex_t"
size = 40
conf = "HIGH"
source = "glibc x86-64 ABI"
  [[struct.opaque]]
  offset = 0
  size = 40
  covers = ["__data", "__size", "__align"]

[[struct]]
name = "timespec"
size = 16
conf = "HIGH"
source = "glibc x86-64 ABI"
  [[struct.field]]
  name = "tv_sec"
  offset = 0
  type = "time_t"
  conf = "HIGH"
  source = "glibc"
  [[struct.field]]
  name = "tv_nsec"
  offset = 8
  type = "i64"
  conf = "HIGH"
  source = "glibc"
`
	if err := os.WriteFile(filepath.Join(dir, "glibc.toml"), []byte(frag), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	full, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), []string{libc}, Options{Spec: full, Structs: sp, StructsSrc: dir, DebugDirs: elfread.DefaultDebugDirs, Require: []string{"pthread_mutex_t", "timespec"}})
	if err != nil {
		t.Fatal(err)
	}
	fr := r.Files[0]
	if fr.DWARFVia != elfread.ViaBuildID || r.Exit != 0 || len(fr.Structs) != 2 {
		var b strings.Builder
		r.WriteText(&b)
		t.Fatalf("glibc types via %s: exit %d\n%s", fr.DWARFVia, r.Exit, b.String())
	}
	// The same spec with a wrong size is caught.
	sp.Structs[1].Size = 24
	r, err = Check(context.Background(), []string{libc}, Options{Spec: full, Structs: sp, StructsSrc: dir, DebugDirs: elfread.DefaultDebugDirs})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, r, KindSize, Incompatible, "timespec: size 16 B, spec 24 B")
}
