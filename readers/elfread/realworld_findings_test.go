package elfread

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/testbin"
)

// Faults the wide real-artefact run (TestPaholeAgreeWide on Debian's
// dwz'd -dbg packages, extracted) found in the front end's handling of
// supplementary files; each test shows its class on a small pair built
// here.

// dwzInstalledPair builds liba.so and libb.so whose dwz supplement is
// named as a Debian -dbg package names it, by its installed path
// (/usr/lib/debug/.dwz/<triplet>/NAME), and is written where an extracted
// package puts it: root/.dwz/<triplet>/NAME. It returns the library
// directory and root.
func dwzInstalledPair(t *testing.T) (dir, root string) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("dwz"); err != nil {
		t.Skipf("skipping: dwz not found (install the Debian package dwz): %v", err)
	}
	dir, root = t.TempDir(), t.TempDir()
	src := string(realSource(t, "agree.c"))
	for n, src := range map[string]string{
		"a": src + "\nstruct only_a { struct bits b; struct { int q; } anon; } g_only_a;\n",
		"b": src,
	} {
		if err := writeFile(dir, n+".c", src); err != nil {
			t.Fatal(err)
		}
		if err := cc.Shared(dir, "lib"+n+".so", "", "", []string{n + ".c"}, "-Wl,--build-id"); err != nil {
			t.Fatal(err)
		}
	}
	const installed = "/usr/lib/debug/.dwz/x86_64-linux-gnu/nrtabi-realworld-test.debug"
	if _, err := os.Stat(installed); err == nil {
		t.Skipf("skipping: %s exists on this machine", installed)
	}
	sup := filepath.Join(root, strings.TrimPrefix(installed, "/usr/lib/debug/"))
	if err := os.MkdirAll(filepath.Dir(sup), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dwz", "-m", sup, "-M", installed, "liba.so", "libb.so")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dwz: %v\n%s", err, out)
	}
	return dir, root
}

// TestFuncValueSize: a member whose type is a DW_TAG_subroutine_type
// with a DW_AT_byte_size (Go's func values: 8 bytes, a pointer) has that
// size; typemodel.SizeOf gives a function type 0 whatever its DIE states.
func TestFuncValueSize(t *testing.T) {
	bin, err := testbin.Program(t.TempDir(), "pair", "package main\n\ntype pair struct {\n\ta uint8\n\tf func(int) error\n}\n\nvar P pair\n\nfunc main() { println(P.a, P.f == nil) }\n")
	if errors.Is(err, testbin.ErrNoGo) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	d := openDebugT(t, bin)
	found, err := d.FindStructs([][]string{{"main.pair"}})
	if err != nil || found[0] == nil {
		t.Fatalf("main.pair: %v %v", found, err)
	}
	s, err := d.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Fields) != 2 || s.Fields[1].Name != "f" {
		t.Fatalf("fields %+v", s.Fields)
	}
	if got := s.Fields[1].Size(); got != 8 {
		t.Errorf("main.pair.f (func(int) error, DW_AT_byte_size 8): size %d, want 8", got)
	}
}

// TestDeclaredMemberTypeSize: a member whose class the unit only
// declares (g++ emits a class with a key function only in the unit that
// defines that function: gold::Errors's initialize_lock_ in Debian's
// binutils-x86-64-linux-gnu-dbg) has the size of the definition another
// unit of the file holds, as gdb resolves it; the graph gives 0.
func TestDeclaredMemberTypeSize(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"lock.h": "namespace g {\nstruct Init { virtual ~Init(); int a; long b[2]; };\nstruct Errors { int n; Init il; int m; };\n}\n",
		"a.cc":   "#include \"lock.h\"\ng::Init::~Init() {}\n",
		"b.cc":   "#include \"lock.h\"\nint count(g::Errors *e) { return e->n + e->il.a; }\n",
	} {
		if err := writeFile(dir, name, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", "libdecl.so", "a.cc", "b.cc"); err != nil {
		t.Fatal(err)
	}
	d := openDebugT(t, filepath.Join(dir, "libdecl.so"))
	found, err := d.FindStructs([][]string{{"g::Errors"}, {"g::Init"}})
	if err != nil || found[0] == nil || found[1] == nil {
		t.Fatalf("%v %v", found, err)
	}
	g := d.Types()
	errs, err := g.Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	init, err := g.Struct(found[1].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if init.Size == 0 || len(errs.Fields) != 3 {
		t.Fatalf("g::Init %d bytes, g::Errors %d fields", init.Size, len(errs.Fields))
	}
	if got := errs.Fields[1].Size(); got != init.Size {
		t.Errorf("g::Errors.il (class g::Init, declared in this unit, defined in the other): size %d, want %d", got, init.Size)
	}
}

// TestSupplementUnderDebugDir: a supplement named by its installed path
// /usr/lib/debug/.dwz/<triplet>/NAME is found under a debug directory
// that is an extracted package's /usr/lib/debug (DIR/.dwz/<triplet>/NAME),
// as every dwz'd Debian -dbg package names it (binutils, libgprofng0).
// findSupplement tries DIR/.dwz/NAME and DIR/.build-id/..., not the path
// under DIR.
func TestSupplementUnderDebugDir(t *testing.T) {
	dir, root := dwzInstalledPair(t)
	d, err := OpenDebug(context.Background(), filepath.Join(dir, "liba.so"), Lookup{Dirs: []string{root}})
	if err != nil {
		t.Fatalf("the supplement at %s/.dwz/x86_64-linux-gnu/ is not found: %v", root, err)
	}
	defer d.Close()
	if _, err := d.AllTypes(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
}

// TestMissingSupplementNotCorrupt: with the supplement missing and
// AllowMissing, the graph's error names the missing supplement, not
// "corrupted DWARF": the DWARF is sound, a file it needs was not found
// (Debug.Missing says which).
func TestMissingSupplementNotCorrupt(t *testing.T) {
	dir, _ := dwzInstalledPair(t)
	d, err := OpenDebug(context.Background(), filepath.Join(dir, "liba.so"), Lookup{Dirs: []string{t.TempDir()}, AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Missing) == 0 {
		t.Fatal("the missing supplement is not recorded")
	}
	_, err = d.AllTypes(context.Background(), 1)
	if err == nil {
		t.Fatal("the graph of a file whose supplement is missing built without error")
	}
	if msg := err.Error(); strings.Contains(msg, "corrupted") || !strings.Contains(msg, "supplementary") {
		t.Errorf("the error calls sound DWARF corrupted instead of naming the missing supplement: %v", err)
	}
}
