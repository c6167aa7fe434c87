package e2e

import (
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
	pkgs := filepath.Join(dir, "pkgs")
	if err := os.MkdirAll(pkgs, 0o755); err != nil {
		t.Fatal(err)
	}
	s := debSet{t, pkgs}
	ids := map[string]string{}
	for _, lib := range []string{filepath.Join(libnrtDir(), builder.LibnrtFile), filepath.Join(refLibDir("ref"), builder.LibnccomFile)} {
		ids[filepath.Base(lib)] = s.split(lib, lib, filepath.Base(lib), mainDir, dbgDir)
	}
	if err := os.Symlink(builder.LibnccomFile, filepath.Join(mainDir, "usr", "lib", "libnccom.so")); err != nil {
		t.Fatal(err)
	}
	sides := [][2]string{{s.deb(mainDir, "libnrt"), s.deb(dbgDir, "libnrt-dbgsym")}}
	if _, err := exec.LookPath("rpmbuild"); err == nil {
		rpm, debuginfo := s.rpms([]string{"/usr/lib/libnrt.so.1", "/usr/lib/libnccom.so.2", "/usr/lib/libnccom.so"}, mainDir, dbgDir)
		sides = append(sides, [2]string{rpm, debuginfo})
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
