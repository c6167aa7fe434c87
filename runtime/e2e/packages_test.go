package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/builder"
)

// TestReferencePackagesAreClean holds docs/packages.md#debug-packages to the
// reference libraries: `nrtabi check
// --spec 2.31.24` on a .deb of the reference libraries (libnrt.so.1 and
// libnccom.so.2, stripped) beside its -dbgsym .deb (their DWARF under
// /usr/lib/debug/.build-id) is CLEAN, each library's DWARF read from the
// debug package in memory; no temporary file is written (TMPDIR, an empty
// directory, stays empty) and the packages are not unpacked next to
// themselves. The same holds of .rpm packages built by rpmbuild when it is
// installed (.ci/run installs rpm). docs/packages.md.
func TestReferencePackagesAreClean(t *testing.T) {
	requireWorld(t)
	for _, tool := range []string{"objcopy", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not found (.ci/run installs it)", tool)
		}
	}
	dir := t.TempDir()
	mainDir, dbgDir := filepath.Join(dir, "main"), filepath.Join(dir, "dbg")
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if err := os.MkdirAll(filepath.Join(mainDir, "usr", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, lib := range []string{filepath.Join(libnrtDir(), builder.LibnrtFile), filepath.Join(refLibDir("ref"), builder.LibnccomFile)} {
		id := ""
		for _, l := range strings.Split(run("readelf", "-n", lib), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "Build" && f[1] == "ID:" {
				id = f[2]
			}
		}
		if len(id) < 3 {
			t.Fatalf("%s has no build-id", lib)
		}
		ids[filepath.Base(lib)] = id
		debug := filepath.Join(dbgDir, "usr", "lib", "debug", ".build-id", id[:2], id[2:]+".debug")
		if err := os.MkdirAll(filepath.Dir(debug), 0o755); err != nil {
			t.Fatal(err)
		}
		stripped := filepath.Join(mainDir, "usr", "lib", filepath.Base(lib))
		run("objcopy", "--only-keep-debug", lib, debug)
		run("objcopy", "--strip-debug", "--add-gnu-debuglink="+debug, lib, stripped)
	}
	if err := os.Symlink(builder.LibnccomFile, filepath.Join(mainDir, "usr", "lib", "libnccom.so")); err != nil {
		t.Fatal(err)
	}
	pkgs := filepath.Join(dir, "pkgs")
	if err := os.MkdirAll(pkgs, 0o755); err != nil {
		t.Fatal(err)
	}
	deb := func(root, name, z string) string {
		if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
			t.Fatal(err)
		}
		control := fmt.Sprintf("Package: %s\nVersion: 2.31.24\nArchitecture: amd64\nMaintainer: nrtabi tests <t@example.invalid>\nDescription: reference libraries\n", name)
		if err := os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(pkgs, name+"_2.31.24_amd64.deb")
		run("dpkg-deb", "-Z"+z, "--root-owner-group", "-b", root, out)
		if err := os.RemoveAll(filepath.Join(root, "DEBIAN")); err != nil {
			t.Fatal(err)
		}
		return out
	}
	sides := [][2]string{{deb(mainDir, "libnrt", "xz"), deb(dbgDir, "libnrt-dbgsym", "xz")}}
	if _, err := exec.LookPath("rpmbuild"); err == nil {
		top := filepath.Join(dir, "rpm")
		spec := "Name: libnrt\nVersion: 2.31.24\nRelease: 1\nSummary: reference libraries\nLicense: none\n" +
			"%define debug_package %{nil}\n%define __strip /bin/true\n%define __os_install_post %{nil}\n%define _build_id_links none\n" +
			"%description\nreference libraries\n%package debuginfo\nSummary: their debug info\n%description debuginfo\ntheir debug info\n" +
			"%install\nmkdir -p %{buildroot}\ncp -a " + mainDir + "/. " + dbgDir + "/. %{buildroot}/\n" +
			"%files\n/usr/lib/libnrt.so.1\n/usr/lib/libnccom.so.2\n/usr/lib/libnccom.so\n%files debuginfo\n/usr/lib/debug\n"
		if err := os.MkdirAll(top, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, "libnrt.spec"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		run("rpmbuild", "-bb", "--quiet", "--define", "_topdir "+top, "--define", "_binary_payload w19.zstdio",
			"--define", "_rpmdir "+pkgs, "--define", "_build_name_fmt %%{NAME}.rpm", "--target", "x86_64", filepath.Join(top, "libnrt.spec"))
		sides = append(sides, [2]string{filepath.Join(pkgs, "libnrt.rpm"), filepath.Join(pkgs, "libnrt-debuginfo.rpm")})
	} else {
		t.Log("rpmbuild not found: the .rpm half is not run (.ci/run installs rpm)")
	}
	before, err := os.ReadDir(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, s := range sides {
		cmd := exec.Command(checkerPath(), "check", "--spec", "2.31.24", s[0], s[1])
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "DEBUGINFOD_URLS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("nrtabi check %s %s: %v\n%s", s[0], s[1], err, out)
		}
		for lib, id := range ids {
			for _, want := range []string{
				"== " + s[0] + "!/usr/lib/" + lib + " (shared object, build-id " + id + ")",
				"DWARF: " + s[1] + "!/usr/lib/debug/.build-id/" + id[:2] + "/" + id[2:] + ".debug (build-id)",
			} {
				if !strings.Contains(string(out), want) {
					t.Errorf("%s: the report lacks %q:\n%s", s[0], want, out)
				}
			}
		}
		for _, want := range []string{"link contract (libnrt)", "link contract (libnccom)", "verdict: CLEAN"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s: the report lacks %q:\n%s", s[0], want, out)
			}
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("nrtabi check wrote into TMPDIR: %v", ents)
	}
	if after, _ := os.ReadDir(pkgs); len(after) != len(before) {
		t.Errorf("nrtabi check wrote next to the packages: %d entries before, %d after", len(before), len(after))
	}
}
