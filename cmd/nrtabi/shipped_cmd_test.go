package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
)

// Packages as they ship and as they pair (docs/packages.md#debug-packages).

// debugFileOf is the one debug file under tr's dbg tree.
func debugFileOf(t *testing.T, tr pkgTree) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tr.dbg, "usr", "lib", "debug", ".build-id", "*", "*.debug"))
	if err != nil || len(m) != 1 {
		t.Fatalf("debug files of %s: %v %v", tr.dbg, m, err)
	}
	return m[0]
}

// TestDebugPackageAlone: a -dbgsym .deb given alone is read: its debug
// files are the inputs (show finds the struct), while beside its main
// package it only answers the lookup. (Before, it read 0 inputs.)
func TestDebugPackageAlone(t *testing.T) {
	tr := splitTree(t, typesObject(t, "", ""))
	dbg := tr.deb(t, tr.dbg, "libdev-dbgsym", "xz")
	rc, out, errs := runLayoutCLI("show", "nrt_instance_info_t", dbg)
	if rc != 0 || !strings.Contains(out, "== "+dbg+"!/usr/lib/debug/.build-id/") || !strings.Contains(out, "nrt_instance_info_t: size 32") {
		t.Errorf("show STRUCT DEBUGPKG: exit %d\n%s%s", rc, out, errs)
	}
}

// TestAmbiguousDebugPackages: two debug packages claiming the library's
// build-id with different DWARF are refused by name, naming both, in
// either order (the verdict never follows argument order); the same debug
// package given twice under two names is one answer. (Before, the first
// given won.)
func TestAmbiguousDebugPackages(t *testing.T) {
	a := splitTree(t, typesObject(t, "", ""))
	b := splitTree(t, typesObject(t, "\tint refcnt; /* +28 HIGH */\n", "\tint refs;\n"))
	aDebug, bDebug := debugFileOf(t, a), debugFileOf(t, b)
	// b's debug file, given a's build-id in place, under a's name.
	note := filepath.Join(b.dir, "a.note")
	mustRun(t, "objcopy", "--dump-section", ".note.gnu.build-id="+note, aDebug)
	mustRun(t, "objcopy", "--update-section", ".note.gnu.build-id="+note, bDebug)
	forged := filepath.Join(b.dbg, strings.TrimPrefix(aDebug, a.dbg))
	if err := os.MkdirAll(filepath.Dir(forged), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bDebug, forged); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Dir(bDebug))
	main := a.deb(t, a.main, "libdev", "xz")
	dbgA := a.deb(t, a.dbg, "libdev-dbgsym", "xz")
	dbgB := b.deb(t, b.dbg, "libdev-other-dbgsym", "zstd")
	var lines []string
	for _, args := range [][]string{{main, dbgA, dbgB}, {main, dbgB, dbgA}, {dbgB, main, dbgA}} {
		rc, out, errs := runLayoutCLI(append([]string{"check", "--spec", "2.31.24"}, args...)...)
		if rc != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "with different DWARF") || !strings.Contains(errs, dbgA+"!/usr/lib/debug/") || !strings.Contains(errs, dbgB+"!/usr/lib/debug/") {
			t.Errorf("check %v: exit %d, want 1 and one line naming both debug files\n%s%s", args, rc, out, errs)
		}
		lines = append(lines, errs)
	}
	if lines[0] != lines[1] || lines[1] != lines[2] {
		t.Errorf("the refusal depends on the order of the arguments:\n%s", strings.Join(lines, ""))
	}
	twice := filepath.Join(a.dir, "copy-dbgsym.deb")
	mustRun(t, "cp", dbgA, twice)
	if rc, out, errs := runLayoutCLI("check", "--spec", "2.31.24", main, dbgA, twice); rc != 0 || !strings.Contains(out, "verdict: CLEAN") {
		t.Errorf("one debug package given twice: exit %d, want CLEAN\n%s%s", rc, out, errs)
	}
}

// TestStaticLibraryWalk: a walk meets glibc's 8-byte empty libanl.a stub
// (listed, not an error that ends the walk) and a static library whose
// object, built with -g, is an input named lib.a!t.o and shown. (Before,
// the stub ended the walk: "a .deb without a data.tar member".)
func TestStaticLibraryWalk(t *testing.T) {
	needTool(t, "ar")
	needTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "t.c")
	if err := os.WriteFile(src, []byte("struct walk_probe { int a; long b; } walk_v;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(dir, "lib")
	if err := os.Mkdir(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "gcc", "-g", "-c", "-o", filepath.Join(dir, "t.o"), src)
	mustRun(t, "ar", "rcs", filepath.Join(tree, "libt.a"), filepath.Join(dir, "t.o"))
	if err := os.WriteFile(filepath.Join(tree, "libanl.a"), []byte("!<arch>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, errs := runLayoutCLI("show", "walk_probe", tree)
	if rc != 0 || !strings.Contains(out, filepath.Join(tree, "libt.a")+"!t.o") || !strings.Contains(out, "/* size: 16, cachelines: 1, members: 2 */") || !strings.Contains(out, "libanl.a: an archive holding no ELF file") {
		t.Errorf("show over a tree of static libraries: exit %d\n%s%s", rc, out, errs)
	}
}

// TestCraftedPackagesCLI: internal/hostile's crafted packages through
// check: a stream failing its own integrity check is exit 1 and one line
// naming the package and the format; the inputs as tools ship them are
// read (exit 0, or 1 with one line for the empty stub, which holds no
// input).
func TestCraftedPackagesCLI(t *testing.T) {
	lib, err := os.ReadFile(typesObject(t, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	cases, skipped, err := hostile.PackageCases(t.TempDir(), lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		t.Logf("not run: %s", s)
	}
	for _, c := range cases {
		rc, out, errs := runLayoutCLI("check", "--spec", "2.31.24", c.Path)
		switch {
		case strings.Count(errs, "\n") > 1 || strings.Contains(errs, "goroutine "):
			t.Errorf("%s: more than one line:\n%s", c.Name, errs)
		case c.Want != "" && (rc != 1 || !strings.Contains(errs, c.Path+": ") || !strings.Contains(errs, c.Want)):
			t.Errorf("%s: exit %d, want 1 and %q\n%s", c.Name, rc, c.Want, errs)
		case c.Want == "" && c.Members > 0 && (rc != 0 || !strings.Contains(out, "verdict: CLEAN")):
			t.Errorf("%s: exit %d, want it read CLEAN\n%s%s", c.Name, rc, out, errs)
		case c.Want == "" && c.Members == 0 && rc != 0 && rc != 1:
			t.Errorf("%s: exit %d\n%s%s", c.Name, rc, out, errs)
		}
	}
}
