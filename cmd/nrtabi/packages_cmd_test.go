package main

import (
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
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("check wrote into TMPDIR: %v", ents)
	}
	if after, _ := os.ReadDir(tr.dir); len(after) != len(before) {
		t.Errorf("check wrote next to the packages: %d entries before, %d after", len(before), len(after))
	}
}
