package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/fixture"
)

// Packages built here by the real tools (dpkg-deb, rpmbuild, tar) from a
// library built with gcc -g and split as distributions split it: a main
// package with the stripped library, a debug package with its DWARF under
// /usr/lib/debug/.build-id (docs/packages.md). .ci/run installs the tools.

// pkgTree is a library split into a main tree and a debug tree.
type pkgTree struct{ dir, main, dbg string }

// splitTree lays out lib (stripped) under main/usr/lib and its debug file
// under dbg/usr/lib/debug/.build-id.
func splitTree(t *testing.T, lib string) pkgTree {
	t.Helper()
	dir := t.TempDir()
	stripped, debugDir, _, err := fixture.SplitDebug(lib, filepath.Join(dir, "split"))
	if errors.Is(err, fixture.ErrNoObjcopy) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	tr := pkgTree{dir: dir, main: filepath.Join(dir, "main"), dbg: filepath.Join(dir, "dbg")}
	for _, d := range []string{filepath.Join(tr.main, "usr", "lib"), filepath.Join(tr.dbg, "usr", "lib")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, "cp", stripped, filepath.Join(tr.main, "usr", "lib"))
	mustRun(t, "ln", "-s", filepath.Base(lib), filepath.Join(tr.main, "usr", "lib", "libdev.so"))
	mustRun(t, "cp", "-r", debugDir, filepath.Join(tr.dbg, "usr", "lib", "debug"))
	return tr
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("skipping: %s not found (.ci/run installs it)", name)
	}
}

// deb builds NAME_VERSION_amd64.deb of root with dpkg-deb, compressed as z.
func (tr pkgTree) deb(t *testing.T, root, name, z string) string {
	t.Helper()
	needTool(t, "dpkg-deb")
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := fmt.Sprintf("Package: %s\nVersion: 2.31.24\nArchitecture: amd64\nMaintainer: nrtabi tests <t@example.invalid>\nDescription: test package\n", name)
	if err := os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tr.dir, name+"_2.31.24_amd64.deb")
	mustRun(t, "dpkg-deb", "-Z"+z, "--root-owner-group", "-b", root, out)
	if err := os.RemoveAll(filepath.Join(root, "DEBIAN")); err != nil {
		t.Fatal(err)
	}
	return out
}

// rpms builds the main package and its -debuginfo subpackage with
// rpmbuild, the payload compressed as payload (an rpm _binary_payload).
func (tr pkgTree) rpms(t *testing.T, payload string) (main, debug string) {
	t.Helper()
	needTool(t, "rpmbuild")
	top := filepath.Join(tr.dir, "rpm-"+payload)
	spec := `Name: libdev
Version: 2.31.24
Release: 1
Summary: test package
License: none
%define debug_package %{nil}
%define __strip /bin/true
%define __os_install_post %{nil}
%define _build_id_links none
%description
test package
%package debuginfo
Summary: its debug info
%description debuginfo
its debug info
%install
mkdir -p %{buildroot}
cp -a ` + tr.main + `/. ` + tr.dbg + `/. %{buildroot}/
%files
/usr/lib/libdev.so
/usr/lib/` + "libtypes.so" + `
%files debuginfo
/usr/lib/debug
`
	if err := os.MkdirAll(top, 0o755); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(top, "libdev.spec")
	if err := os.WriteFile(sp, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "rpmbuild", "-bb", "--quiet", "--define", "_topdir "+top, "--define", "_binary_payload "+payload,
		"--define", "_rpmdir "+top, "--define", "_build_name_fmt %%{NAME}.rpm", "--target", "x86_64", sp)
	return filepath.Join(top, "libdev.rpm"), filepath.Join(top, "libdev-debuginfo.rpm")
}

// TestCheckPackages: check reads each package format in memory, pairs the
// library with its debug package given beside it, finds it CLEAN, and
// writes nothing: TMPDIR stays empty, the package's directory unchanged.
func TestCheckPackages(t *testing.T) {
	tr := splitTree(t, typesObject(t, "", ""))
	type pair struct{ main, dbg string }
	cases := map[string]pair{
		"deb xz+zstd": {tr.deb(t, tr.main, "libdev", "xz"), tr.deb(t, tr.dbg, "libdev-dbgsym", "zstd")},
		"deb gzip":    {tr.deb(t, tr.main, "libdev-gz", "gzip"), tr.deb(t, tr.dbg, "libdev-gz-dbgsym", "gzip")},
	}
	if _, err := exec.LookPath("rpmbuild"); err == nil {
		for _, p := range []string{"w9.gzdio", "w6.xzdio", "w19.zstdio"} {
			m, d := tr.rpms(t, p)
			cases["rpm "+p] = pair{m, d}
		}
	} else {
		t.Log("rpmbuild not found: the .rpm cases are not run (.ci/run installs rpm)")
	}
	for ext, flag := range map[string]string{"gz": "-z", "xz": "-J", "zst": "--zstd"} {
		out := filepath.Join(tr.dir, "libdev.tar."+ext)
		dbg := filepath.Join(tr.dir, "libdev-dbg.tar."+ext)
		mustRun(t, "tar", flag, "-C", tr.main, "-cf", out, ".")
		mustRun(t, "tar", flag, "-C", tr.dbg, "-cf", dbg, ".")
		cases["tar "+ext] = pair{out, dbg}
	}
	before, _ := os.ReadDir(tr.dir)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for name, c := range cases {
		rc, out, errs := runLayoutCLI("check", "--spec", "2.31.24", c.main, c.dbg)
		member := c.main + "!/usr/lib/libtypes.so"
		if rc != 0 || !strings.Contains(out, "== "+member+" (shared object") || !strings.Contains(out, "DWARF: "+c.dbg+"!/usr/lib/debug/.build-id/") || !strings.Contains(out, "verdict: CLEAN") {
			t.Errorf("%s: exit %d, want CLEAN with %s's DWARF from %s\n%s%s", name, rc, member, c.dbg, out, errs)
		}
		if strings.Contains(out, "libdev.so") {
			t.Errorf("%s: the symlink member was read:\n%s", name, out)
		}
		// The debug package alone has no input; the main one alone no DWARF.
		rc, _, errs = runLayoutCLI("check", "--spec", "2.31.24", c.main)
		if rc != 1 || !strings.Contains(errs, member+": no DWARF anywhere") {
			t.Errorf("%s without its debug package: exit %d, want 1 naming %s\n%s", name, rc, member, errs)
		}
	}
	if after, _ := os.ReadDir(tr.dir); len(after) != len(before) {
		t.Errorf("check wrote next to the packages: %d entries before, %d after", len(before), len(after))
	}
	// The debug package first, and both met in a walked directory: the
	// pairing does not depend on the order or on how they were named.
	c := cases["deb xz+zstd"]
	walked := filepath.Join(tr.dir, "walked")
	if err := os.Mkdir(walked, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{c.main, c.dbg} {
		if err := os.Link(p, filepath.Join(walked, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	before, _ = os.ReadDir(tr.dir)
	for _, args := range [][]string{{c.dbg, c.main}, {walked}} {
		rc, out, errs := runLayoutCLI(append([]string{"check", "--spec", "2.31.24"}, args...)...)
		if rc != 0 || !strings.Contains(out, "!/usr/lib/libtypes.so (shared object") || !strings.Contains(out, "-dbgsym_2.31.24_amd64.deb!/usr/lib/debug/.build-id/") || !strings.Contains(out, "verdict: CLEAN") {
			t.Errorf("check %v: exit %d, want CLEAN with the library's DWARF from the dbgsym package\n%s%s", args, rc, out, errs)
		}
	}
	// show STRUCT PACKAGE: one package argument is its members.
	rc, out, errs := runLayoutCLI("show", "nrt_instance_info_t", c.main, c.dbg)
	if rc != 0 || !strings.Contains(out, "== "+c.main+"!/usr/lib/libtypes.so") || !strings.Contains(out, "nrt_instance_info_t: size 32") {
		t.Errorf("show of a package: exit %d\n%s%s", rc, out, errs)
	}
	if rc, _, errs := runLayoutCLI("show", "--c", "nrt_instance_info_t", c.main); rc != 2 || !strings.Contains(errs, "a directory or a package") {
		t.Errorf("show --c of a package: exit %d, want 2\n%s", rc, errs)
	}
	// extract PKG,DEBUGPKG and extract PKG!/member,DEBUGPKG: the one
	// library, its DWARF from the debug package in memory.
	for _, arg := range []string{c.main + "," + c.dbg, c.main + "!/usr/lib/libtypes.so," + c.dbg} {
		rc, out, errs := runLayoutCLI("extract", "--struct", "nrt_instance_info_t", arg)
		if rc != 0 || !strings.Contains(out, `name = "nrt_instance_info_t"`) || !strings.Contains(out, "# DWARF: "+c.dbg+"!/usr/lib/debug/.build-id/") {
			t.Errorf("extract %s: exit %d\n%s%s", arg, rc, out, errs)
		}
	}
	// extract --all of a package: every named type of its one library,
	// the DWARF from the debug package, read in memory.
	if rc, out, errs := runLayoutCLI("extract", "--all", "-j", "2", c.main+","+c.dbg); rc != 0 || !strings.Contains(out, `name = "nrt_instance_info_t"`) || !strings.Contains(out, c.dbg+"!/usr/lib/debug/.build-id/") {
		t.Errorf("extract --all of a package: exit %d\n%s%s", rc, out, errs)
	}
	if rc, _, errs := runLayoutCLI("extract", "--struct", "nrt_instance_info_t", c.main+"!/usr/lib/nope.so"); rc != 1 || !strings.Contains(errs, "no ELF member /usr/lib/nope.so outside /usr/lib/debug/ (its ELF members: "+c.main+"!/usr/lib/libtypes.so)") {
		t.Errorf("extract of a member the package lacks: exit %d\n%s", rc, errs)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("check wrote into TMPDIR: %v", ents)
	}
	if after, _ := os.ReadDir(tr.dir); len(after) != len(before) {
		t.Errorf("check wrote next to the packages: %d entries before, %d after", len(before), len(after))
	}
}

// TestDiffPackages: diff OLD.deb,OLD-dbgsym.deb NEW.deb,NEW-dbgsym.deb
// compares the libraries of two package versions, each paired with its own
// debug package: the same package is no change, a renamed field is the one
// compatible change.
func TestDiffPackages(t *testing.T) {
	old := splitTree(t, typesObject(t, "", ""))
	renamed := splitTree(t, typesObject(t, "\tint refcnt; /* +28 HIGH */\n", "\tint refs;\n"))
	oldSide := old.deb(t, old.main, "libdev", "xz") + "," + old.deb(t, old.dbg, "libdev-dbgsym", "xz")
	newSide := renamed.deb(t, renamed.main, "libdev", "zstd") + "," + renamed.deb(t, renamed.dbg, "libdev-dbgsym", "zstd")
	if rc, out, errs := runLayoutCLI("diff", oldSide, oldSide); rc != 0 || !strings.Contains(out, "verdict: no changes") {
		t.Errorf("a package against itself: exit %d\n%s%s", rc, out, errs)
	}
	rc, out, errs := runLayoutCLI("diff", oldSide, newSide)
	if rc != 4 || !strings.Contains(out, "refcnt") || !strings.Contains(out, "refs") {
		t.Errorf("a renamed field: exit %d, want 4 naming refcnt -> refs\n%s%s", rc, out, errs)
	}
	// A debug package alone is no side.
	rc, _, errs = runLayoutCLI("diff", oldSide, strings.Split(newSide, ",")[1])
	if rc != 1 || !strings.Contains(errs, "no ELF file outside /usr/lib/debug/") {
		t.Errorf("a debug package alone: exit %d\n%s", rc, errs)
	}
}

// TestHostilePackagesCLI: a hostile package is refused with one line,
// exit 1, naming the package and the member, its bytes escaped.
func TestHostilePackagesCLI(t *testing.T) {
	needTool(t, "tar")
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	elf := append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...)
	// A tar whose member is named with a terminal escape and ../, and
	// which ends inside that member.
	var tb strings.Builder
	hdr := make([]byte, 512)
	copy(hdr, "../\x1b[31mevil.so")
	copy(hdr[100:], "0000644\x00")
	copy(hdr[108:], "0000000\x00")
	copy(hdr[116:], "0000000\x00")
	copy(hdr[124:], fmt.Sprintf("%011o\x00", 4096))
	copy(hdr[136:], "00000000000\x00")
	hdr[156] = '0'
	copy(hdr[257:], "ustar\x0000")
	copy(hdr[148:], "        ")
	sum := 0
	for _, c := range hdr {
		sum += int(c)
	}
	copy(hdr[148:], fmt.Sprintf("%06o\x00 ", sum))
	tb.Write(hdr)
	tb.Write(elf)
	cut := write("cut.tar", []byte(tb.String()))
	rc, out, errs := runLayoutCLI("check", "--spec", "2.31.24", cut)
	if rc != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, cut+": member ../\\x1b[31mevil.so: the archive ends inside this member") {
		t.Errorf("truncated tar with an escape in a name: exit %d\n%q", rc, errs)
	}
}

// TestPackageMemberNamesEscaped: a member stored under a ../ name with a
// terminal escape in it is read as a name only (nothing is written) and
// reaches the report and show's output escaped, never raw.
func TestPackageMemberNamesEscaped(t *testing.T) {
	lib, err := os.ReadFile(typesObject(t, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	name := "../\x1b[2Jlib.so"
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(lib)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(lib)
	tw.Close()
	pkg := filepath.Join(dir, "evil.tar")
	if err := os.WriteFile(pkg, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "--spec", "2.31.24", pkg}, {"show", "nec_version_info_t", pkg, pkg}} {
		rc, out, errs := runLayoutCLI(args...)
		if rc != 0 || strings.Contains(out+errs, "\x1b") || !strings.Contains(out, pkg+`!/../\x1b[2Jlib.so`) {
			t.Errorf("%s: exit %d, want the member named escaped\n%q\n%s", args[0], rc, out, errs)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("something was written beside the package: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "\x1b[2Jlib.so")); err == nil {
		t.Error("the ../ member was written")
	}
}
